/**
 * "best bm25" in bench:quality's report: on each subset of questions, the better of the two BM25
 * baselines (./bm25-baseline.ts), so that a target over BM25 is measured against the stronger
 * one wherever it is stronger. Better means the higher hit@5, then the higher MRR@10, then the
 * first listed.
 */
import type { EvaluationReport, ModeReport } from '../../src/evaluation/evaluate.js';
import type { Metrics } from '../../src/evaluation/metrics.js';

export const bestBaselineMode = 'best bm25';

export interface Subset {
  field?: string | undefined;
  value?: string | undefined;
}

function figuresOf(mode: ModeReport, subset: Subset): { questions: number; metrics: Metrics } | undefined {
  if (!subset.field) return { questions: mode.questions, metrics: mode.metrics };
  return mode.subsets.find((entry) => entry.field === subset.field && entry.value === subset.value);
}

/** The baseline mode that does better on the subset, of those named. */
export function betterBaseline(
  report: EvaluationReport,
  baselines: readonly string[],
  subset: Subset,
): ModeReport | undefined {
  let best: { mode: ModeReport; metrics: Metrics } | undefined;
  for (const name of baselines) {
    const mode = report.modes.find((entry) => entry.mode === name);
    const figures = mode && figuresOf(mode, subset);
    if (!mode || !figures) continue;
    const better =
      !best ||
      figures.metrics.hit_at_5 > best.metrics.hit_at_5 ||
      (figures.metrics.hit_at_5 === best.metrics.hit_at_5 &&
        figures.metrics.mrr_at_10 > best.metrics.mrr_at_10);
    if (better) best = { mode, metrics: figures.metrics };
  }
  return best?.mode;
}

/**
 * A mode named "best bm25" whose overall figures and each subset's are those of the better
 * baseline there (latency, misses and errors are the overall winner's).
 */
export function bestBaselineReport(
  report: EvaluationReport,
  baselines: readonly string[],
): ModeReport | undefined {
  const overall = betterBaseline(report, baselines, {});
  if (!overall) return undefined;
  return {
    ...overall,
    mode: bestBaselineMode,
    subsets: overall.subsets.map(
      (entry) =>
        betterBaseline(report, baselines, entry)?.subsets.find(
          (candidate) => candidate.field === entry.field && candidate.value === entry.value,
        ) ?? entry,
    ),
  };
}
