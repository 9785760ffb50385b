/**
 * One package (an export) to its conversations, whatever the format: detected from the file
 * names and the first bytes, or named by the config.
 */
import type { ConversationFormat, ParsedItem, ParseLimits } from '../model.js';
import { ExportError } from '../model.js';
import { parseChatGpt } from './chatgpt.js';
import { parseJsonl } from './jsonl.js';
import type { PackageFile } from './package-files.js';
import { looksLikeSlack, parseSlack } from './slack.js';
import { parseTeams } from './teams.js';

/** The format of a package from its file paths and the start of its (single) file. */
export async function detectFormat(files: readonly PackageFile[]): Promise<ConversationFormat> {
  const paths = files.map((file) => file.path);
  if (files.length > 1 || looksLikeSlack(paths)) {
    if (looksLikeSlack(paths)) return 'slack';
    throw new ExportError(
      `a package of ${files.length} files that is not a Slack export (${paths.slice(0, 3).join(', ')})`,
    );
  }
  const file = files[0];
  if (!file) throw new ExportError('the package has no files');
  if (/\.jsonl$/i.test(file.path)) return 'jsonl';
  if (/(^|\/)conversations\.json$/i.test(file.path)) return 'chatgpt';
  const head = await readHead(file, 8192);
  if (/"mapping"\s*:/.test(head)) return 'chatgpt';
  if (/"(messageType|chatId|@odata\.context)"\s*:/.test(head)) return 'teams';
  if (/^\s*\{[^\n]*"conversation_id"/.test(head)) return 'jsonl';
  throw new ExportError(`cannot tell the format of ${file.path}; name it in the step's \`format\``);
}

async function readHead(file: PackageFile, bytes: number): Promise<string> {
  const stream = await file.open();
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    length += chunk.length;
    if (length >= bytes) break;
  }
  stream.destroy();
  return Buffer.concat(chunks).subarray(0, bytes).toString('utf8');
}

/** Every conversation of the package, in file order, each parsed or rejected with its reason. */
export async function* readPackage(
  format: ConversationFormat,
  files: readonly PackageFile[],
  limits: ParseLimits,
): AsyncGenerator<ParsedItem> {
  if (format === 'slack') {
    yield* parseSlack(files, limits);
    return;
  }
  for (const file of files) {
    const stream = await file.open();
    try {
      if (format === 'chatgpt') yield* parseChatGpt(stream, file.path, limits);
      else if (format === 'teams') yield* parseTeams(stream, file.path, limits);
      else yield* parseJsonl(stream, file.path, limits);
    } finally {
      stream.destroy();
    }
  }
}
