/**
 * One package (an export) to its conversations, whatever the format: detected from the file
 * names and the first bytes, or named by the config.
 */
import type { ConversationFormat, ParsedItem, ParseLimits } from '../model.js';
import { ExportError } from '../model.js';
import { parseChatGpt } from './chatgpt.js';
import { looksLikeChatGpt, packageContents } from './export-layout.js';
import { parseJsonl } from './jsonl.js';
import type { PackageFile } from './package-files.js';
import { looksLikeSlack, parseSlack } from './slack.js';
import { parseTeams } from './teams.js';

/** The format of a package from its file paths and the start of its (single) export file. */
export async function detectFormat(files: readonly PackageFile[]): Promise<ConversationFormat> {
  const paths = files.map((file) => file.path);
  if (looksLikeSlack(paths)) return 'slack';
  if (looksLikeChatGpt(paths) || paths.some((path) => /^conversations(-\d+)?\.json$/i.test(path)))
    return 'chatgpt';
  const exports = files.filter((file) => /\.(json|jsonl)$/i.test(file.path));
  if (exports.length > 1)
    throw new ExportError(
      `a package of ${exports.length} JSON files that is neither a Slack nor a ChatGPT export (${exports
        .slice(0, 3)
        .map((file) => file.path)
        .join(', ')})`,
    );
  const file = exports[0];
  if (!file)
    throw new ExportError(
      `the package has no JSON or JSONL file${paths.length ? ` (${paths.slice(0, 3).join(', ')})` : ''}`,
    );
  if (/\.jsonl$/i.test(file.path)) return 'jsonl';
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

/**
 * Every conversation of the package, in file order, each parsed or rejected with its reason.
 * Only the files holding conversations are read (packageContents names the others).
 */
export async function* readPackage(
  format: ConversationFormat,
  files: readonly PackageFile[],
  limits: ParseLimits,
): AsyncGenerator<ParsedItem> {
  const { read } = packageContents(format, files);
  if (format === 'slack') {
    yield* parseSlack(read, limits);
    return;
  }
  for (const file of read) {
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
