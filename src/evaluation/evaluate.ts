/**
 * Retrieval evaluation: runs every question through a retrieval function once per mode,
 * reduces the ranked results to distinct documents, and reports per mode hit@1/5/10, MRR@10
 * and nDCG@10 (overall and per style, language and split), latency p50/p99, the misses (no
 * expected page in the first 10 documents) with what came back instead, and failures. Pure:
 * the caller supplies the retrieval (the search service in process, or the API over HTTP).
 */
import {
  distinctDocuments,
  firstRelevantRank,
  type Metrics,
  meanMetrics,
  percentile,
  questionMetrics,
  type ResultSource,
} from './metrics.js';
import { type EvaluationQuestion, type SubsetField, subsetFields } from './questions.js';

/** What one retrieval returned: its ranked results' sources (segments, repeats allowed). */
export interface Retrieved {
  sources: ResultSource[];
  /** The server's own time for it, when it reports one. */
  took_ms?: number | undefined;
}

export type Retrieve = (
  mode: string,
  question: EvaluationQuestion,
  signal?: AbortSignal,
) => Promise<Retrieved>;

export interface ReturnedDocument {
  rank: number;
  url: string | null;
  object_key: string | null;
  title: string | null;
}

export interface Miss {
  id: string;
  question: string;
  expected: string[];
  /** Rank of the first expected page among all documents returned (beyond 10), or null. */
  expected_rank: number | null;
  /** The first documents returned instead. */
  returned: ReturnedDocument[];
}

export interface SubsetReport {
  field: SubsetField;
  value: string;
  questions: number;
  metrics: Metrics;
}

export interface LatencyReport {
  p50: number;
  p99: number;
  mean: number;
}

export interface ModeReport {
  mode: string;
  questions: number;
  /** Questions whose retrieval threw; they score 0. */
  failed: number;
  metrics: Metrics;
  subsets: SubsetReport[];
  /** Wall time of each retrieval as the caller saw it, milliseconds. */
  latency_ms: LatencyReport;
  /** The server's reported time, when every retrieval reported one. */
  server_ms: LatencyReport | null;
  misses: Miss[];
  errors: { id: string; question: string; error: string }[];
}

export interface EvaluationReport {
  questions: number;
  modes: ModeReport[];
}

export interface EvaluationOptions {
  questions: readonly EvaluationQuestion[];
  modes: readonly string[];
  retrieve: Retrieve;
  signal?: AbortSignal | undefined;
  /** Documents listed per miss (default 5). */
  returnedPerMiss?: number | undefined;
}

interface Outcome {
  question: EvaluationQuestion;
  metrics: Metrics;
  documents: ResultSource[];
  milliseconds: number;
  tookMs: number | undefined;
  error?: string;
}

const zero: Metrics = { hit_at_1: 0, hit_at_5: 0, hit_at_10: 0, mrr_at_10: 0, ndcg_at_10: 0 };

export async function evaluateRetrieval(options: EvaluationOptions): Promise<EvaluationReport> {
  const modes: ModeReport[] = [];
  for (const mode of options.modes) {
    const outcomes: Outcome[] = [];
    for (const question of options.questions) {
      options.signal?.throwIfAborted();
      outcomes.push(await evaluateOne(options.retrieve, mode, question, options.signal));
    }
    modes.push(summarise(mode, outcomes, options.returnedPerMiss ?? 5));
  }
  return { questions: options.questions.length, modes };
}

async function evaluateOne(
  retrieve: Retrieve,
  mode: string,
  question: EvaluationQuestion,
  signal: AbortSignal | undefined,
): Promise<Outcome> {
  const started = performance.now();
  try {
    const retrieved = await retrieve(mode, question, signal);
    const milliseconds = performance.now() - started;
    const documents = distinctDocuments(retrieved.sources);
    return {
      question,
      metrics: questionMetrics(documents, question.expected),
      documents,
      milliseconds,
      tookMs: retrieved.took_ms,
    };
  } catch (error) {
    if (signal?.aborted) throw error;
    return {
      question,
      metrics: zero,
      documents: [],
      milliseconds: performance.now() - started,
      tookMs: undefined,
      error: (error as Error).message ?? String(error),
    };
  }
}

function summarise(mode: string, outcomes: readonly Outcome[], returnedPerMiss: number): ModeReport {
  const succeeded = outcomes.filter((outcome) => outcome.error === undefined);
  const serverTimes = succeeded.map((outcome) => outcome.tookMs);
  return {
    mode,
    questions: outcomes.length,
    failed: outcomes.length - succeeded.length,
    metrics: round(meanMetrics(outcomes.map((outcome) => outcome.metrics))),
    subsets: subsetsOf(outcomes),
    latency_ms: latency(succeeded.map((outcome) => outcome.milliseconds)),
    server_ms:
      succeeded.length > 0 && serverTimes.every((time) => typeof time === 'number')
        ? latency(serverTimes as number[])
        : null,
    misses: succeeded
      .filter((outcome) => outcome.metrics.hit_at_10 === 0)
      .map((outcome) => ({
        id: outcome.question.id,
        question: outcome.question.question,
        expected: outcome.question.expected,
        expected_rank: firstRelevantRank(outcome.documents, outcome.question.expected),
        returned: outcome.documents.slice(0, returnedPerMiss).map((document, index) => ({
          rank: index + 1,
          url: document.url,
          object_key: document.object_key,
          title: document.title ?? null,
        })),
      })),
    errors: outcomes
      .filter((outcome) => outcome.error !== undefined)
      .map((outcome) => ({
        id: outcome.question.id,
        question: outcome.question.question,
        error: outcome.error as string,
      })),
  };
}

/** Figures per value of each label present (style, language, split), values in order of appearance. */
function subsetsOf(outcomes: readonly Outcome[]): SubsetReport[] {
  const subsets: SubsetReport[] = [];
  for (const field of subsetFields) {
    const groups = new Map<string, Outcome[]>();
    for (const outcome of outcomes) {
      const value = outcome.question[field];
      if (value === undefined) continue;
      const group = groups.get(value) ?? [];
      group.push(outcome);
      groups.set(value, group);
    }
    for (const [value, group] of groups) {
      subsets.push({
        field,
        value,
        questions: group.length,
        metrics: round(meanMetrics(group.map((outcome) => outcome.metrics))),
      });
    }
  }
  return subsets;
}

function latency(milliseconds: readonly number[]): LatencyReport {
  const mean =
    milliseconds.length === 0 ? 0 : milliseconds.reduce((sum, value) => sum + value, 0) / milliseconds.length;
  return {
    p50: roundTo(percentile(milliseconds, 50), 2),
    p99: roundTo(percentile(milliseconds, 99), 2),
    mean: roundTo(mean, 2),
  };
}

function round(metrics: Metrics): Metrics {
  return {
    hit_at_1: roundTo(metrics.hit_at_1, 4),
    hit_at_5: roundTo(metrics.hit_at_5, 4),
    hit_at_10: roundTo(metrics.hit_at_10, 4),
    mrr_at_10: roundTo(metrics.mrr_at_10, 4),
    ndcg_at_10: roundTo(metrics.ndcg_at_10, 4),
  };
}

function roundTo(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
