/**
 * npm run bench:page-features -- --reuse DATA_DIR [--questions FILE]...
 *
 * Issue 34, fifth pass: can the rerank put the right page first more often, or lift
 * paraphrases into the top 5, with features it does not have yet (bench/lib/page-features.ts:
 * page-level aggregation over the 50 fused candidates and over a keyword list 200 deep, the
 * page's length, the title and headings against the question's words, its glossary
 * translations and expansions, or softly through the shipped word vectors)? On a corpus
 * bench:quality ingested, the **dev split only** of both dev sets (bench/questions/README.md:
 * postgres-docs.jsonl's 80 and postgres-docs-dev2.jsonl's 120) is searched through the search
 * service as the API builds it: RRF with the rerank off (50 segments), the same with the
 * rerank on (the replay check), and RRF with keyword and vector depth 200 (the deep pool).
 *
 * Prints hit@5 / MRR@10 over distinct pages per set and for each set's paraphrases: each new
 * feature added to the service's weights at its best grid weight (on all 200), then
 * coordinate ascent over feature sets with a 2-fold cross-validation (odd and even questions):
 * what a fitted weight gives on questions it was not fitted on. Touches no other question.
 *
 * --rewrites: also the query rewrites before any ranking, the service's RRF with the rerank
 * on: word-vector expansion off, or with another minimum similarity, weight or neighbour
 * count, and ELD's query margin (the lead a query's language needs, 0.08) at 0.05 and 0.03.
 *
 * Check: replaying the service's weights on the collected features gives the service's
 * rankings (its first 20 segments) on every question (exit 1 otherwise; BENCH_BREAK=replay
 * replays another page weight and must exit 1).
 */
import { parseArgs } from 'node:util';
import { loadSharedWordVectors } from '../src/embedding/word-vectors.js';
import { distinctDocuments, meanMetrics, questionMetrics } from '../src/evaluation/metrics.js';
import { analyseQuery, candidateContext, rerankDefaults, rerankFeatures } from '../src/search/rerank.js';
import type { SearchResponse } from '../src/search/search-service.js';
import { detectionThresholds } from '../src/search-index/language-detection.js';
import { benchBreak, check, finish } from './lib/checks.js';
import { dataDirSearch, openDataDirSearch, segmentPositions } from './lib/data-dir-search.js';
import { readDevQuestions, reusedDataDir, tuningBenchOptions } from './lib/dev-questions.js';
import { type PageCandidate, pageFeatureNames, pageFeatures } from './lib/page-features.js';

const { values } = parseArgs({
  options: {
    ...tuningBenchOptions,
    rewrites: { type: 'boolean', default: false },
  },
});
const dataDir = reusedDataDir(values.reuse);
const FILES = values.questions as string[];
const K = 60;
const DEPTH = rerankDefaults.depth;
const DEEP = 200;
const GRID = [0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.08, 0.12, 0.2, 0.3, 0.5];

const questions = await readDevQuestions(FILES);
const { database, search } = await openDataDirSearch(dataDir);
const shared = await loadSharedWordVectors();
const vectors = shared && {
  ...shared,
  indexOf: shared.indexOf.bind(shared),
  vectors: await shared.rows(shared.words.map((_, row) => row)),
};
const pageSegments = new Map(
  (
    await database.db
      .selectFrom('knowledge_segments')
      .select(['document_id'])
      .select((eb) => eb.fn.countAll().as('segments'))
      .groupBy('document_id')
      .execute()
  ).map((row) => [row.document_id, Number(row.segments)]),
);

type Candidate = PageCandidate & {
  url: string | null;
  object_key: string | null;
  segment_index: number;
};
type Weights = Record<string, number>;
interface Prepared {
  question: (typeof questions)[number];
  candidates: Candidate[];
  features: Weights[];
  service: string[];
}

async function candidatesOf(response: SearchResponse): Promise<Candidate[]> {
  const ids = response.results.map((result) => result.segment_id);
  const positions = await segmentPositions(database, ids);
  return response.results.map((result) => ({
    segment_id: result.segment_id,
    document_id: result.source.document_id,
    url: result.source.url,
    object_key: result.source.object_key,
    score: result.score,
    keyword_raw: result.components.find((component) => component.ranking === 'keyword')?.raw_score ?? null,
    text: result.text,
    title: result.source.title,
    heading_path: result.source.heading_path,
    segment_index: positions.get(result.segment_id) ?? 0,
  }));
}

const prepared: Prepared[] = [];
for (const question of questions) {
  const query = question.question;
  const off = await search.search('rrf', { query, limit: DEPTH, rerank: false });
  const on = await search.search('rrf', { query, limit: DEPTH });
  const deep = await search.search('rrf', {
    query,
    limit: 100,
    rerank: false,
    candidate_depth: { keyword: DEEP, vector: DEEP },
  });
  const candidates = await candidatesOf(off);
  const head = candidates.slice(0, DEPTH);
  const context = candidateContext(head);
  const analysed = analyseQuery(query);
  const parameters = off.parameters as {
    query_expansions?: { lexeme: string }[];
    query_translations?: { lexeme: string }[];
    detected_language?: string | null;
  };
  const rewrites = {
    expansions: (parameters.query_expansions ?? []).map((entry) => entry.lexeme),
    translations: (parameters.query_translations ?? []).map((entry) => entry.lexeme),
    english: (parameters.detected_language ?? 'english') === 'english',
  };
  const extra = pageFeatures(query, rewrites, head, await candidatesOf(deep), pageSegments, vectors);
  prepared.push({
    question,
    candidates,
    service: on.results.map((result) => result.segment_id),
    features: head.map((candidate, index) => ({
      ...rerankFeatures(analysed, candidate, context),
      ...extra[index],
    })),
  });
}

/** The rerank's order (rerank.ts `reorder`) with any features. */
function ranked(entry: Prepared, weights: Weights) {
  const unit = 1 / (K + 1);
  const head = entry.candidates.slice(0, DEPTH).map((candidate, index) => {
    let boost = 0;
    for (const [name, weight] of Object.entries(weights))
      if (weight !== 0) boost += weight * ((entry.features[index] as Weights)[name] ?? 0);
    return { ...candidate, score: candidate.score + boost * unit };
  });
  head.sort(
    (a, b) => b.score - a.score || (a.segment_id < b.segment_id ? -1 : a.segment_id > b.segment_id ? 1 : 0),
  );
  return [...head, ...entry.candidates.slice(DEPTH)];
}

function metricsOf(among: readonly Prepared[], weightsOf: (entry: Prepared) => Weights) {
  return meanMetrics(
    among.map((entry) =>
      questionMetrics(distinctDocuments(ranked(entry, weightsOf(entry))), entry.question.expected),
    ),
  );
}

// BENCH_BREAK=replay: the replay's page weight is not the service's, so the check must fail.
const service: Weights = { ...rerankDefaults.weights, ...(benchBreak('replay') ? { page: 0.5 } : {}) };
const same = prepared.filter(
  (entry) =>
    ranked(entry, service)
      .slice(0, 20)
      .map((candidate) => candidate.segment_id)
      .join() === entry.service.slice(0, 20).join(),
).length;
check(same === prepared.length, `the replay gives the service's rankings (${same}/${prepared.length})`);

const groups: [string, Prepared[]][] = [];
for (const file of new Set(questions.map((question) => question.file))) {
  groups.push([file, prepared.filter((entry) => entry.question.file === file)]);
  groups.push([
    `${file} paraphrase`,
    prepared.filter((entry) => entry.question.file === file && entry.question.style === 'paraphrase'),
  ]);
}
groups.push(['all', prepared]);

function row(label: string, weightsOf: (entry: Prepared) => Weights) {
  const cells = groups.map(([, among]) => {
    const metrics = metricsOf(among, weightsOf);
    return `${metrics.hit_at_5.toFixed(3)} / ${metrics.mrr_at_10.toFixed(3)}`;
  });
  console.log(`| ${label} | ${cells.join(' | ')} |`);
}

console.log(`${prepared.length} dev questions (${FILES.join(', ')}); data dir ${dataDir}`);
console.log(`replay equals the service on ${same}/${prepared.length}\n`);
console.log(`| hit@5 / MRR@10 | ${groups.map(([label]) => label).join(' | ')} |`);
console.log(`|---|${groups.map(() => '---').join('|')}|`);
row('rerank off', () => ({}));
row("the service's weights", () => service);
const serviceFigures = metricsOf(prepared, () => service);
for (const name of pageFeatureNames) {
  let best = { weight: 0, mrr: serviceFigures.mrr_at_10 };
  for (const weight of GRID) {
    const metrics = metricsOf(prepared, () => ({ ...service, [name]: weight }));
    if (metrics.hit_at_5 + 1e-9 >= serviceFigures.hit_at_5 && metrics.mrr_at_10 > best.mrr + 1e-9)
      best = { weight, mrr: metrics.mrr_at_10 };
  }
  row(`+ ${name} at its best, ${best.weight}`, () => ({ ...service, [name]: best.weight }));
}

/** Coordinate ascent from the service's weights: MRR@10, hit@5 never below the start's. */
function ascend(among: readonly Prepared[], features: readonly string[]): Weights {
  const weights: Weights = { ...service };
  const floor = metricsOf(among, () => weights).hit_at_5;
  let current = metricsOf(among, () => weights).mrr_at_10;
  for (let pass = 0; pass < 3; pass++) {
    let moved = false;
    for (const name of features)
      for (const weight of GRID) {
        const metrics = metricsOf(among, () => ({ ...weights, [name]: weight }));
        if (metrics.hit_at_5 + 1e-9 >= floor && metrics.mrr_at_10 > current + 1e-9) {
          weights[name] = weight;
          current = metrics.mrr_at_10;
          moved = true;
        }
      }
    if (!moved) break;
  }
  return weights;
}

const base = ['keyword', 'page', 'phrase', 'identifier'];
const featureSets: [string, string[]][] = [
  ["the service's four", base],
  [
    '+ page aggregation',
    [...base, 'pagesum', 'pagefrac', 'pagesqrt', 'deep_count', 'deep_countsqrt', 'deep_kwsum'],
  ],
  ['+ page length', [...base, 'shortpage', 'shortlog', 'pagefrac']],
  ['+ title and headings', [...base, 'headq', 'headqx', 'titleq', 'headvec', 'titlevec', 'page_headvec']],
  ['+ coverage', [...base, 'cover', 'page_cover']],
];
console.log('\nfitted on all 200, then 2-fold (each half fitted on the other):\n');
console.log(`| features | ${groups.map(([label]) => label).join(' | ')} |`);
console.log(`|---|${groups.map(() => '---').join('|')}|`);
for (const [label, features] of featureSets) {
  const fitted = ascend(prepared, features);
  const used = Object.entries(fitted).filter(([, weight]) => weight > 0);
  row(`${label}: ${used.map(([name, weight]) => `${name} ${weight}`).join(', ')}`, () => fitted);
  const halves = [prepared.filter((_, i) => i % 2 === 0), prepared.filter((_, i) => i % 2 === 1)];
  const heldOut = new Map<Prepared, Weights>();
  for (const [fit, held] of [
    [halves[0], halves[1]],
    [halves[1], halves[0]],
  ] as const) {
    const weights = ascend(fit ?? [], features);
    for (const entry of held ?? []) heldOut.set(entry, weights);
  }
  row(`${label}, 2-fold`, (entry) => heldOut.get(entry) ?? service);
}
if (values.rewrites) {
  console.log('\nquery rewrites (the service, rerank on):\n');
  console.log(`| variant | ${groups.map(([label]) => label).join(' | ')} |`);
  console.log(`|---|${groups.map(() => '---').join('|')}|`);
  const margin = detectionThresholds.queryMargin;
  const variants: { label: string; expansion?: object; expand?: boolean; margin?: number }[] = [
    { label: 'defaults' },
    { label: 'no expansion', expand: false },
    { label: 'expansion similarity >= 0.7', expansion: { minSimilarity: 0.7 } },
    { label: 'expansion similarity >= 0.5', expansion: { minSimilarity: 0.5 } },
    { label: 'expansion weight 0.2', expansion: { weight: 0.2 } },
    { label: 'expansion 2 neighbours at 0.15', expansion: { neighbours: 2, weight: 0.15 } },
    { label: 'query language margin 0.05', margin: 0.05 },
    { label: 'query language margin 0.03', margin: 0.03 },
  ];
  for (const variant of variants) {
    detectionThresholds.queryMargin = variant.margin ?? margin;
    const variantSearch = dataDirSearch(database, dataDir, {
      expansion: variant.expansion,
    }).search;
    // The rankings as the service gives them: no rerank replay, so its order scores directly.
    const served = new Map<Prepared, Candidate[]>();
    for (const entry of prepared) {
      const query = entry.question.question;
      const response = await variantSearch.search('rrf', { query, limit: DEPTH, expand: variant.expand });
      served.set(entry, await candidatesOf(response));
    }
    const cells = groups.map(([, among]) => {
      const metrics = meanMetrics(
        among.map((entry) =>
          questionMetrics(distinctDocuments(served.get(entry) ?? []), entry.question.expected),
        ),
      );
      return `${metrics.hit_at_5.toFixed(3)} / ${metrics.mrr_at_10.toFixed(3)}`;
    });
    console.log(`| ${variant.label} | ${cells.join(' | ')} |`);
    const changed = prepared.filter((entry) => {
      const first = (list: readonly Candidate[]) =>
        distinctDocuments(list).findIndex((document) =>
          entry.question.expected.some((page) => (document.url ?? '').endsWith(`/${page}`)),
        );
      return first(served.get(entry) ?? []) !== first(ranked(entry, service));
    });
    console.log(
      `  first relevant page moved: ${changed.map((entry) => entry.question.id).join(', ') || 'none'}`,
    );
  }
  detectionThresholds.queryMargin = margin;
}
await database.close();
finish();
