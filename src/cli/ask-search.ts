/**
 * `weir ask "question"` and `weir search "query" [--mode M] [--limit N]` against a running
 * service: the answer with its citations (POST /chat/complete), or the ranked sources
 * (POST /chat/search/<mode>). --json prints the API's answer as it came.
 */
import { searchModes } from '../evaluation/http-retrieve.js';
import { ApiCallError, expectOk, httpCall, unreachable } from './client.js';

export interface AskSearchOptions {
  url: string;
  mode?: string | undefined;
  limit?: string | undefined;
  json?: boolean | undefined;
}

interface Attribution {
  url: string | null;
  object_key: string | null;
  /** The API's openable link: an http(s) `url`, or the stored object as a path of the service. */
  link?: string | null;
  document_id: string;
  title: string | null;
  heading_path: string[];
}

interface ChatAnswer {
  answer: string;
  sources: { citation: number; cited: boolean; source: Attribution }[];
}

interface SearchAnswer {
  results: { rank: number; score: number; text: string; source: Attribution }[];
  total: number;
  took_ms: number;
}

/**
 * Title > heading path, then where it opens: the API's `link` made absolute against the
 * service called (a stored file's `file://` origin would name a path on the server and open
 * nothing on the reader's machine), else the stored object's key or the document id.
 */
export function describeSource(source: Attribution, baseUrl: string): { name: string; where: string } {
  const name = [source.title ?? source.document_id, ...source.heading_path].join(' > ');
  if (source.link) return { name, where: new URL(source.link, baseUrl).toString() };
  const openable = source.url && /^https?:/i.test(source.url) ? source.url : undefined;
  return { name, where: openable ?? source.object_key ?? source.document_id };
}

function excerpt(text: string, length = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat;
}

/** Runs one command's request, telling an unreachable service or an API error in one line. */
async function guarded(command: string, url: string, work: () => Promise<number>): Promise<number> {
  try {
    return await work();
  } catch (error) {
    const told = unreachable(url, error) ?? (error instanceof ApiCallError ? error.message : undefined);
    if (!told) throw error;
    process.stderr.write(`weir ${command}: ${told}\n`);
    return 1;
  }
}

function oneText(command: string, words: string[]): string | undefined {
  const text = words.join(' ').trim();
  if (text.length > 0) return text;
  process.stderr.write(`weir ${command}: give the ${command === 'ask' ? 'question' : 'query'} in quotes\n`);
  return undefined;
}

export async function askCommand(
  words: string[],
  options: AskSearchOptions,
  environment: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const question = oneText('ask', words);
  if (question === undefined) return 2;
  const call = httpCall(options.url, environment.WEIR_API_KEY);
  return guarded('ask', options.url, async () => {
    const answer = await expectOk<ChatAnswer>(call, 'POST', '/chat/complete', { query: question });
    if (options.json) {
      process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
      return 0;
    }
    process.stdout.write(`${answer.answer.trim()}\n`);
    const cited = answer.sources.filter((source) => source.cited);
    // An answer that cites nothing still shows what it was given to read.
    const shown = cited.length > 0 ? cited : answer.sources;
    if (shown.length > 0)
      process.stdout.write(cited.length > 0 ? '\nSources:\n' : '\nSources (not cited):\n');
    for (const source of shown.sort((a, b) => a.citation - b.citation)) {
      const { name, where } = describeSource(source.source, options.url);
      process.stdout.write(`  [${source.citation}] ${name}\n      ${where}\n`);
    }
    return 0;
  });
}

export async function searchCommand(
  words: string[],
  options: AskSearchOptions,
  environment: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const query = oneText('search', words);
  if (query === undefined) return 2;
  const mode = options.mode ?? 'rrf';
  if (!(searchModes as readonly string[]).includes(mode)) {
    process.stderr.write(
      `weir search: --mode takes ${searchModes.join(', ')}, not ${JSON.stringify(mode)}\n`,
    );
    return 2;
  }
  const limit = options.limit === undefined ? 10 : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    process.stderr.write('weir search: --limit must be an integer from 1 to 100\n');
    return 2;
  }
  const call = httpCall(options.url, environment.WEIR_API_KEY);
  return guarded('search', options.url, async () => {
    const answer = await expectOk<SearchAnswer>(call, 'POST', `/chat/search/${mode}`, { query, limit });
    if (options.json) {
      process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
      return 0;
    }
    if (answer.results.length === 0)
      process.stdout.write(`no ${mode} results for ${JSON.stringify(query)}\n`);
    for (const result of answer.results) {
      const { name, where } = describeSource(result.source, options.url);
      process.stdout.write(
        `${result.rank}. ${name}  (score ${result.score.toFixed(4)})\n   ${where}\n   ${excerpt(result.text)}\n`,
      );
    }
    return 0;
  });
}
