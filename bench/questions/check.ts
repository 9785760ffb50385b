/**
 * npx tsx bench/questions/check.ts [FILE] [--corpus DIR]
 *
 * Checks a question set: it parses as `weir eval` reads it, every question carries the style,
 * language and split labels the reports break down by, and every expected page exists in the
 * corpus directory (default the PostgreSQL docs; a missing one is a problem, `--corpus ''` skips
 * the page check). Prints the counts per label; exit code 1 on any problem.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { checkQuestionSet } from './question-set.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { corpus: { type: 'string', default: '/usr/share/doc/postgresql-doc-15/html' } },
});
const file = positionals[0] ?? 'bench/questions/postgres-docs.jsonl';
const result = checkQuestionSet(await readFile(file, 'utf8'), values.corpus || undefined);
console.log(`${file}: ${result.questions} questions`);
for (const [label, counts] of Object.entries(result.counts)) {
  console.log(
    `  ${label}: ${Object.entries(counts)
      .map(([value, count]) => `${value} ${count}`)
      .join(', ')}`,
  );
}
for (const problem of result.problems) console.error(`  problem: ${problem}`);
process.exitCode = result.problems.length > 0 ? 1 : 0;
