/** An evaluation report as text: a markdown table per mode, latency, failures and misses. */
import type { EvaluationReport, Miss, ModeReport } from './evaluate.js';
import type { Metrics } from './metrics.js';

const header =
  '| subset | questions | hit@1 | hit@5 | hit@10 | MRR@10 | nDCG@10 |\n|---|---|---|---|---|---|---|';

function figures(metrics: Metrics): string {
  return [metrics.hit_at_1, metrics.hit_at_5, metrics.hit_at_10, metrics.mrr_at_10, metrics.ndcg_at_10]
    .map((value) => value.toFixed(3))
    .join(' | ');
}

export function formatMode(mode: ModeReport, options: { misses?: boolean } = {}): string {
  const lines = [
    `## ${mode.mode}: ${mode.questions} questions${mode.failed > 0 ? `, ${mode.failed} failed` : ''}`,
    '',
    header,
    `| all | ${mode.questions} | ${figures(mode.metrics)} |`,
    ...mode.subsets.map(
      (subset) => `| ${subset.field}=${subset.value} | ${subset.questions} | ${figures(subset.metrics)} |`,
    ),
    '',
    `latency: p50 ${mode.latency_ms.p50.toFixed(1)} ms, p99 ${mode.latency_ms.p99.toFixed(1)} ms${
      mode.server_ms
        ? ` (server: p50 ${mode.server_ms.p50.toFixed(1)} ms, p99 ${mode.server_ms.p99.toFixed(1)} ms)`
        : ''
    }`,
  ];
  for (const [error, ids] of groupErrors(mode.errors)) {
    const named =
      ids.length > 5 ? `${ids.slice(0, 5).join(', ')} and ${ids.length - 5} more` : ids.join(', ');
    lines.push(`failed (${ids.length}): ${error} [${named}]`);
  }
  if (options.misses !== false && mode.misses.length > 0) {
    lines.push('', `misses (no expected page in the first 10 documents): ${mode.misses.length}`);
    for (const miss of mode.misses) lines.push(...formatMiss(miss));
  }
  return lines.join('\n');
}

/** Failures by message: a mode that cannot run fails every question the same way. */
function groupErrors(errors: ModeReport['errors']): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const failure of errors) groups.set(failure.error, [...(groups.get(failure.error) ?? []), failure.id]);
  return groups;
}

function formatMiss(miss: Miss): string[] {
  const found = miss.expected_rank === null ? 'not returned' : `first at rank ${miss.expected_rank}`;
  return [
    `- ${miss.id}: ${miss.question}`,
    `    expected: ${miss.expected.join(', ')} (${found})`,
    `    returned: ${
      miss.returned.length === 0
        ? 'nothing'
        : miss.returned.map((document) => `${document.rank}. ${documentLabel(document)}`).join('  ')
    }`,
  ];
}

/** A short name for a returned document: its URL's path, else its object key. */
export function documentLabel(document: { url: string | null; object_key: string | null }): string {
  if (document.url) {
    try {
      return new URL(document.url).pathname;
    } catch {
      return document.url;
    }
  }
  return document.object_key ?? '(unknown)';
}

export function formatReport(report: EvaluationReport, options: { misses?: boolean } = {}): string {
  return `${report.modes.map((mode) => formatMode(mode, options)).join('\n\n')}\n`;
}

/** One row per mode for the questions with `field = value` (all questions without a field). */
export function formatComparison(
  report: EvaluationReport,
  subset: { field?: string; value?: string } = {},
): string {
  const rows = report.modes.map((mode) => {
    const figuresFor = subset.field
      ? mode.subsets.find((entry) => entry.field === subset.field && entry.value === subset.value)
      : { questions: mode.questions, metrics: mode.metrics };
    return figuresFor
      ? `| ${mode.mode} | ${figuresFor.questions} | ${figures(figuresFor.metrics)} |`
      : `| ${mode.mode} | 0 | - | - | - | - | - |`;
  });
  return [
    '| mode | questions | hit@1 | hit@5 | hit@10 | MRR@10 | nDCG@10 |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
