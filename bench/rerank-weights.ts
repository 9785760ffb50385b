/**
 * npm run bench:rerank-weights -- --reuse DATA_DIR [--questions FILE]...
 *
 * How the weights of the RRF rerank (src/search/rerank.ts) were chosen. On a corpus
 * bench:quality ingested, the **dev split only** of the question files (default
 * bench/questions/postgres-docs.jsonl, 80 dev questions, and postgres-docs-dev2.jsonl, 120;
 * bench/questions/README.md) is searched once through the search service as the
 * API builds it (word-vector expansion, glossary translation), RRF at the defaults with the
 * rerank off and 50 segments. Each candidate's features are computed once; then the weights
 * are searched by coordinate ascent over a grid, maximising MRR@10 over distinct pages with
 * hit@5 kept at least at the rerank-off figure, for each rerank depth in DEPTHS. Prints the
 * figures of each feature alone and of the weights found. Touches no other question.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { distinctDocuments, meanMetrics, questionMetrics } from '../src/evaluation/metrics.js';
import { parseQuestions } from '../src/evaluation/questions.js';
import {
  analyseQuery,
  candidateContext,
  type RerankFeatures,
  type RerankWeights,
  reorder,
  rerankDefaults,
  rerankFeatures,
} from '../src/search/rerank.js';
import type { SearchResult } from '../src/search/search-service.js';
import { openDataDirSearch, segmentPositions } from './lib/data-dir-search.js';
import { readDevQuestions, reusedDataDir, tuningBenchOptions } from './lib/dev-questions.js';

const { values } = parseArgs({
  options: {
    ...tuningBenchOptions,
  },
});
const dataDir = reusedDataDir(values.reuse);
const QUESTIONS = values.questions as string[];
const SPLIT = 'dev';
const DEPTHS = [20, 30, 40, 50];
const GRID = [0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.08, 0.12, 0.2, 0.3, 0.5, 0.8];
const names = ['keyword', 'page', 'proximity', 'phrase', 'identifier', 'heading', 'position'] as const;
const K = 60;

const questions = await readDevQuestions(QUESTIONS);
const { database, search } = await openDataDirSearch(dataDir);

type Candidate = SearchResult & {
  score: number;
  title: string | null;
  heading_path: string[];
  segment_index: number;
};
const asked: {
  question: (typeof questions)[number];
  candidates: Candidate[];
  features: Map<number, RerankFeatures[]>;
}[] = [];
for (const question of questions) {
  const response = await search.search('rrf', { query: question.question, limit: 50, rerank: false });
  const ids = response.results.map((result) => result.segment_id);
  const positions = await segmentPositions(database, ids);
  const candidates = response.results.map((result) => ({
    ...result,
    title: result.source.title,
    heading_path: result.source.heading_path,
    segment_index: positions.get(result.segment_id) ?? 0,
    document_id: result.source.document_id,
    keyword_raw: result.components.find((component) => component.ranking === 'keyword')?.raw_score ?? null,
  }));
  const analysed = analyseQuery(question.question);
  // As rerank() computes them: the list-wide features over the first `depth` candidates.
  const features = new Map(
    DEPTHS.map((depth) => {
      const head = candidates.slice(0, depth);
      const context = candidateContext(head);
      return [depth, head.map((candidate) => rerankFeatures(analysed, candidate, context))];
    }),
  );
  asked.push({ question, candidates, features });
}

type Asked = (typeof asked)[number];

function figures(weights: RerankWeights, depth: number, among: readonly Asked[] = asked) {
  const metrics = among.map(({ question, candidates, features }) => {
    const ranked = reorder(candidates, features.get(depth) ?? [], { k: K, depth, weights });
    return questionMetrics(distinctDocuments(ranked.map((candidate) => candidate.source)), question.expected);
  });
  return meanMetrics(metrics);
}

const zero: RerankWeights = {
  keyword: 0,
  page: 0,
  proximity: 0,
  phrase: 0,
  identifier: 0,
  heading: 0,
  position: 0,
};
const show = (label: string, metrics: ReturnType<typeof figures>) =>
  console.log(
    `| ${label} | ${metrics.hit_at_1.toFixed(3)} | ${metrics.hit_at_5.toFixed(3)} | ${metrics.mrr_at_10.toFixed(3)} |`,
  );
console.log(`${asked.length} questions (${QUESTIONS.join(', ')}, split ${SPLIT}); data dir ${dataDir}\n`);
console.log('| weights | hit@1 | hit@5 | MRR@10 |\n|---|---|---|---|');
show('rerank off', figures(zero, 50));
show(
  `the service's weights (depth ${rerankDefaults.depth})`,
  figures(rerankDefaults.weights, rerankDefaults.depth),
);
for (const name of names) {
  let best = { weight: 0, metrics: figures(zero, 40) };
  for (const weight of GRID) {
    const metrics = figures({ ...zero, [name]: weight }, 40);
    if (metrics.mrr_at_10 > best.metrics.mrr_at_10 + 1e-9) best = { weight, metrics };
  }
  show(`${name} alone, best ${best.weight} (depth 40)`, best.metrics);
}

/** Coordinate ascent over `features`: MRR@10, with hit@5 never below the rerank-off figure. */
function ascend(depth: number, features: readonly (keyof RerankWeights)[], among: readonly Asked[]) {
  const floor = figures(zero, depth, among).hit_at_5;
  const weights = { ...zero };
  let current = figures(weights, depth, among);
  for (let pass = 0; pass < 3; pass++) {
    let moved = false;
    for (const name of features) {
      for (const weight of GRID) {
        const metrics = figures({ ...weights, [name]: weight }, depth, among);
        if (metrics.hit_at_5 + 1e-9 >= floor && metrics.mrr_at_10 > current.mrr_at_10 + 1e-9) {
          weights[name] = weight;
          current = metrics;
          moved = true;
        }
      }
    }
    if (!moved) break;
  }
  return { weights, current };
}

/**
 * Two-fold cross-validation inside the dev split (odd and even questions): weights fitted on
 * one half, measured on the other. How much of a feature set's gain is fitted noise.
 */
function crossValidated(depth: number, features: readonly (keyof RerankWeights)[]) {
  const halves = [asked.filter((_, index) => index % 2 === 0), asked.filter((_, index) => index % 2 === 1)];
  let mrr = 0;
  let hit = 0;
  for (const [fit, held] of [
    [halves[0], halves[1]],
    [halves[1], halves[0]],
  ] as const) {
    const { weights } = ascend(depth, features, fit ?? []);
    const metrics = figures(weights, depth, held ?? []);
    mrr += (metrics.mrr_at_10 * (held?.length ?? 0)) / asked.length;
    hit += (metrics.hit_at_5 * (held?.length ?? 0)) / asked.length;
  }
  return { mrr, hit };
}

const featureSets: { label: string; features: (keyof RerankWeights)[] }[] = [
  { label: 'all seven', features: [...names] },
  { label: 'page, identifier, keyword', features: ['page', 'identifier', 'keyword'] },
  { label: 'page, identifier', features: ['page', 'identifier'] },
  { label: 'page', features: ['page'] },
];
console.log('\n| features | depth | weights fitted on all | hit@5 | MRR@10 | 2-fold hit@5 | 2-fold MRR@10 |');
console.log('|---|---|---|---|---|---|---|');
// The fit whose 2-fold MRR@10 is best: the candidate to compare with the service's weights.
let best = { mrr: -1, label: '', depth: 0, weights: zero };
for (const { label, features } of featureSets)
  for (const depth of DEPTHS) {
    const { weights, current } = ascend(depth, features, asked);
    const folded = crossValidated(depth, features);
    if (folded.mrr > best.mrr + 1e-9) best = { mrr: folded.mrr, label, depth, weights };
    const used = Object.fromEntries(Object.entries(weights).filter(([, weight]) => weight > 0));
    console.log(
      `| ${label} | ${depth} | ${JSON.stringify(used)} | ${current.hit_at_5.toFixed(3)} | ${current.mrr_at_10.toFixed(3)} | ${folded.hit.toFixed(3)} | ${folded.mrr.toFixed(3)} |`,
    );
  }

// Per question file: does the candidate gain on each dev set, or on one only?
console.log(
  `\nper file: the service's weights against the best 2-fold fit (${best.label}, depth ${best.depth})`,
);
console.log('| file | questions | service hit@5 / MRR@10 | candidate hit@5 / MRR@10 |\n|---|---|---|---|');
for (const file of QUESTIONS) {
  const ids = new Set(parseQuestions(await readFile(file, 'utf8')).map((question) => question.id));
  const among = asked.filter(({ question }) => ids.has(question.id));
  const service = figures(rerankDefaults.weights, rerankDefaults.depth, among);
  const candidate = figures(best.weights, best.depth, among);
  console.log(
    `| ${file} | ${among.length} | ${service.hit_at_5.toFixed(3)} / ${service.mrr_at_10.toFixed(3)} | ${candidate.hit_at_5.toFixed(3)} / ${candidate.mrr_at_10.toFixed(3)} |`,
  );
}
await database.close();
