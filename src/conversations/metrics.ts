/** Quality measures against known ground truth (bench:conversations and the tests). */

export interface PrecisionRecall {
  precision: number;
  recall: number;
  f1: number;
  true_positives: number;
  false_positives: number;
  false_negatives: number;
}

export function precisionRecall(
  truePositives: number,
  falsePositives: number,
  falseNegatives: number,
): PrecisionRecall {
  const precision =
    truePositives + falsePositives === 0 ? 1 : truePositives / (truePositives + falsePositives);
  const recall = truePositives + falseNegatives === 0 ? 1 : truePositives / (truePositives + falseNegatives);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return {
    precision: round(precision),
    recall: round(recall),
    f1: round(f1),
    true_positives: truePositives,
    false_positives: falsePositives,
    false_negatives: falseNegatives,
  };
}

/** Adjusted Rand index of two labelings of the same items (1: identical partitions, ~0: chance). */
export function adjustedRandIndex(
  truth: readonly (string | number)[],
  predicted: readonly (string | number)[],
): number {
  const table = new Map<string, number>();
  const rows = new Map<string, number>();
  const columns = new Map<string, number>();
  truth.forEach((label, index) => {
    const row = String(label);
    const column = String(predicted[index]);
    table.set(`${row}\u0000${column}`, (table.get(`${row}\u0000${column}`) ?? 0) + 1);
    rows.set(row, (rows.get(row) ?? 0) + 1);
    columns.set(column, (columns.get(column) ?? 0) + 1);
  });
  const pairs = (count: number) => (count * (count - 1)) / 2;
  const sum = (values: Iterable<number>) => [...values].reduce((total, value) => total + pairs(value), 0);
  const index = sum(table.values());
  const rowPairs = sum(rows.values());
  const columnPairs = sum(columns.values());
  const expected = (rowPairs * columnPairs) / pairs(truth.length);
  const maximum = (rowPairs + columnPairs) / 2;
  return maximum === expected ? 1 : round((index - expected) / (maximum - expected));
}

/** Share of items whose predicted cluster's majority truth label is their own. */
export function purity(truth: readonly (string | number)[], predicted: readonly (string | number)[]): number {
  const byCluster = new Map<string, Map<string, number>>();
  truth.forEach((label, index) => {
    const cluster = String(predicted[index]);
    const counts = byCluster.get(cluster) ?? new Map<string, number>();
    counts.set(String(label), (counts.get(String(label)) ?? 0) + 1);
    byCluster.set(cluster, counts);
  });
  let majority = 0;
  for (const counts of byCluster.values()) majority += Math.max(...counts.values());
  return truth.length === 0 ? 1 : round(majority / truth.length);
}

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
