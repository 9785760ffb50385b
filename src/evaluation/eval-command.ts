/**
 * `weir eval <questions.jsonl> [--modes keyword,vector,rrf] [--chat] [--url U] [--json] [--limit N]`:
 * runs a question set against a running service over HTTP and prints, per mode, hit@1/5/10,
 * MRR@10 and nDCG@10 (overall and per label), latency, and the misses. Exit code 0 when every
 * retrieval answered, 1 when some failed, 2 for a usage error.
 */
import { readFile } from 'node:fs/promises';
import { defaultUrl } from '../cli/client.js';
import { evaluateRetrieval } from './evaluate.js';
import { apiRoot, httpRetrieve, isEvaluationMode, searchModes } from './http-retrieve.js';
import { parseQuestions, QuestionsError } from './questions.js';
import { formatReport } from './report-text.js';

export interface EvalCommandOptions {
  modes?: string | undefined;
  chat?: boolean | undefined;
  url?: string | undefined;
  json?: boolean | undefined;
  limit?: string | undefined;
}

export const evalDefaults = { limit: 50 } as const;

export async function evalCommand(
  files: string[],
  options: EvalCommandOptions,
  environment: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const fail = (message: string) => {
    process.stderr.write(`weir eval: ${message}\n`);
    return 2;
  };
  if (files.length !== 1) return fail('name one questions file (JSON Lines)');
  const modes = (options.modes ?? searchModes.join(','))
    .split(',')
    .map((mode) => mode.trim())
    .filter((mode) => mode.length > 0);
  if (options.chat && !modes.includes('chat')) modes.push('chat');
  const unknown = modes.filter((mode) => !isEvaluationMode(mode));
  if (modes.length === 0 || unknown.length > 0) {
    return fail(`--modes takes keyword, vector, rrf and chat, not ${JSON.stringify(unknown.join(','))}`);
  }
  const limit = options.limit === undefined ? evalDefaults.limit : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    return fail('--limit must be an integer from 1 to 100');

  let questions: ReturnType<typeof parseQuestions>;
  try {
    questions = parseQuestions(await readFile(files[0] as string, 'utf8'));
  } catch (error) {
    if (error instanceof QuestionsError) return fail(`${files[0]}: ${error.message}`);
    return fail(`cannot read ${files[0]}: ${(error as Error).message}`);
  }
  if (questions.length === 0) return fail(`${files[0]} holds no questions`);

  const url = options.url ?? defaultUrl(environment);
  try {
    await fetch(`${apiRoot(url)}/system/health`);
  } catch (error) {
    const cause = (error as Error & { cause?: Error }).cause?.message ?? (error as Error).message;
    process.stderr.write(`weir eval: cannot reach ${url}: ${cause}\n`);
    return 1;
  }
  const report = await evaluateRetrieval({
    questions,
    modes,
    retrieve: httpRetrieve({ url, limit, apiKey: environment.WEIR_API_KEY }),
  });
  if (options.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else
    process.stdout.write(
      `${questions.length} questions from ${files[0]} against ${url}\n\n${formatReport(report)}`,
    );
  return report.modes.some((mode) => mode.failed > 0) ? 1 : 0;
}
