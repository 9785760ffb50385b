/**
 * Which files of a package hold conversations, and why the others are ignored. A ChatGPT
 * data export is a folder (or its ZIP) of `conversations.json` (or `conversations-000.json`,
 * `conversations-001.json`, ... in newer exports) beside files that are not conversations;
 * a Slack export holds channel lists and user lists beside the channels' day files.
 */
import type { ConversationFormat } from '../model.js';
import type { PackageFile } from './package-files.js';

/** Files of a ChatGPT export that are not conversations, and why each is not read. */
const chatGptCompanions: Record<string, string> = {
  'user.json': 'the account profile (name, e-mail, plan), not conversations',
  'user_settings.json': 'account settings, not conversations',
  'message_feedback.json': 'thumbs-up/down ratings of answers, not conversations',
  'model_comparisons.json': 'answers compared side by side for model feedback, not conversations',
  'shared_conversations.json': 'the list of shared links; the conversations are in conversations.json',
  'export_manifest.json': 'the list of the files in the export',
  'chat.html': 'the same conversations as a web page to browse; conversations.json is read instead',
};

const slackLists: Record<string, string> = {
  'channels.json': 'the channel list; each channel is read from its folder of day files',
  'users.json': 'names of people, which are not kept',
};

const chatGptConversations = /^conversations(-\d+)?\.json$/i;
const slackDay = /(?:^|\/)[^/]+\/\d{4}-\d{2}-\d{2}\.json$/;
const exportFile = /\.(json|jsonl)$/i;

/** Whether paths relative to a folder make it a ChatGPT export: conversations beside what the export puts there. */
export function looksLikeChatGpt(paths: readonly string[]): boolean {
  return (
    paths.some((path) => chatGptConversations.test(path)) &&
    paths.some((path) => path in chatGptCompanions || /^conversations-\d+\.json$/i.test(path))
  );
}

/** A file ignored, and why. */
export interface IgnoredFile {
  path: string;
  reason: string;
}

/** The files of a package the parser of `format` reads, in order, and the others with why they are ignored. */
export function packageContents(
  format: ConversationFormat,
  files: readonly PackageFile[],
): { read: PackageFile[]; ignored: IgnoredFile[] } {
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : 1));
  const reads = readerOf(format, sorted);
  const read = sorted.filter((file) => reads(file.path));
  const ignored = sorted
    .filter((file) => !reads(file.path))
    .map((file) => ({ path: file.path, reason: whyIgnored(format, file.path) }));
  return { read, ignored };
}

function readerOf(format: ConversationFormat, files: readonly PackageFile[]): (path: string) => boolean {
  if (format === 'slack') return (path) => slackDay.test(path);
  if (format === 'chatgpt' && files.some((file) => chatGptConversations.test(file.path)))
    return (path) => chatGptConversations.test(path);
  if (format === 'chatgpt')
    return (path) => /\.json$/i.test(path) && !((path.split('/').at(-1) ?? path) in chatGptCompanions);
  return (path) => exportFile.test(path);
}

function whyIgnored(format: ConversationFormat, path: string): string {
  const name = path.split('/').at(-1) ?? path;
  if (format === 'chatgpt') {
    if (!path.includes('/') && chatGptCompanions[name]) return chatGptCompanions[name] as string;
    if (/\.(png|jpe?g|gif|webp|wav|mp3|mp4|pdf|docx?|xlsx?|pptx?|txt|csv|zip)$/i.test(name))
      return 'a file uploaded to or made in a conversation; its text is not read';
    return 'not part of the conversations of a ChatGPT export';
  }
  if (format === 'slack') {
    if (!path.includes('/') && slackLists[name]) return slackLists[name] as string;
    if (exportFile.test(name)) return "not a channel's day file (`<channel>/YYYY-MM-DD.json`)";
    return 'an attachment or other file, not messages';
  }
  return 'not a JSON or JSONL file';
}
