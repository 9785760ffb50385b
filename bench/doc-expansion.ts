/**
 * npm run bench:doc-expansion -- --reuse DATA_DIR [--questions FILE]... [--weights 0.1,0.2,...]
 *   [--sources neighbours,page,anchors,anchor-context,norwegian,vectors,cooccurrence,all,a+b] [--third-list]
 *
 * Issue 34, sixth pass: document-side expansion at index time, simulated on a corpus
 * bench:quality ingested. Each segment gets a second, lower-weighted keyword field holding terms
 * it lacks but a reader might use (bench/lib/document-expansions.ts: its page neighbours' or
 * its page's salient terms, inbound anchor text, word-vector neighbours, corpus co-occurrence,
 * the Norwegian words the glossary gives for its salient terms),
 * and the search service ranks with it (bench/lib/expanded-keyword-ranking.ts stands in for
 * the in-memory keyword index; the vector ranking, fusion and rerank are the service's own).
 *
 * Reads the **dev split only** of both dev sets (postgres-docs.jsonl's 80 and
 * postgres-docs-dev2.jsonl's 120; bench/questions/README.md). Prints hit@5 / MRR@10 over
 * distinct pages and the share of questions with a right page among the 50 results, per set
 * and for its paraphrases, for: the two BM25 baselines, the service's
 * keyword and RRF rankings, and RRF with each expansion at each field weight; then, for each
 * source, a 2-fold cross-validation of its weight (odd and even questions: the weight chosen
 * on one half, by MRR@10 with hit@5 no lower than the service's there, is scored on the other).
 *
 * --third-list (or --third-list-only, without the field runs): the expanded ranking (field
 * weight 1) as a third RRF list beside the service's unchanged keyword list, fused at each
 * weight of --weights, where the corpus LSA's list goes.
 *
 * Check: at field weight 0 the stand-in ranks every question as the service does (its first
 * 20 RRF segments; exit 1 otherwise; BENCH_BREAK=replay changes a count and must exit 1).
 */
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { loadSharedWordVectors } from '../src/embedding/word-vectors.js';
import {
  distinctDocuments,
  firstRelevantRank,
  type Metrics,
  meanMetrics,
  questionMetrics,
} from '../src/evaluation/metrics.js';
import type { EvaluationQuestion } from '../src/evaluation/questions.js';
import { lexemesOf } from '../src/search/lexemes.js';
import { loadGlossary } from '../src/search/query-translation.js';
import type { SearchResponse } from '../src/search/search-service.js';
import { parseTsvectorText } from '../src/search/tsvector-text.js';
import { bm25Baselines } from './lib/bm25-baseline.js';
import { benchBreak, check, finish } from './lib/checks.js';
import { dataDirSearch, openDataDirSearch } from './lib/data-dir-search.js';
import { readDevQuestions, reusedDataDir, tuningBenchOptions } from './lib/dev-questions.js';
import {
  anchorExpansions,
  cooccurrenceExpansions,
  corpusStatistics,
  type ExpansionMap,
  type ExpansionSegment,
  inboundLabels,
  mergeExpansions,
  neighbourExpansions,
  norwegianEndings,
  pageExpansions,
  readerLanguageExpansions,
  reverseGlossary,
  vectorExpansions,
} from './lib/document-expansions.js';
import { ExpandedKeywordRanking, type RankedSegment } from './lib/expanded-keyword-ranking.js';

const { values } = parseArgs({
  options: {
    ...tuningBenchOptions,
    weights: { type: 'string', default: '0.1,0.2,0.35,0.5' },
    salient: { type: 'string', default: '30' },
    'third-list': { type: 'boolean', default: false },
    'third-list-only': { type: 'boolean', default: false },
    sources: {
      type: 'string',
      default: 'neighbours,page,anchors,anchor-context,norwegian,vectors,cooccurrence,all',
    },
  },
});
const dataDir = reusedDataDir(values.reuse);
const FILES = values.questions as string[];
const WEIGHTS = (values.weights as string).split(',').map(Number);
const SOURCES = (values.sources as string).split(',');
const LIMIT = 50;

const questions = await readDevQuestions(FILES);
const { database, search: service } = await openDataDirSearch(dataDir);
const db = database.db;

const rows = (
  await sql<{
    segment_id: string;
    document_id: string;
    segment_index: number;
    text: string;
    token_count: number;
    language: string;
    execution_id: string;
    vector: string | null;
    url: string | null;
  }>`select s.segment_id, s.document_id, s.segment_index, s.text, s.token_count, s.language, s.execution_id,
        s.search_vector::text as vector, d.url
      from knowledge_segments s join knowledge_documents d on d.document_id = s.document_id
      order by s.segment_id`.execute(db)
).rows;
const segments: (RankedSegment & ExpansionSegment)[] = rows.map((row) => ({
  segmentId: row.segment_id,
  documentId: row.document_id,
  segmentIndex: Number(row.segment_index),
  text: row.text,
  url: row.url,
  tokenCount: Number(row.token_count),
  language: row.language,
  executionId: row.execution_id,
  lexemes: parseTsvectorText(row.vector ?? ''),
}));
// BENCH_BREAK=replay: the first lexeme of 400 segments counts 5 more, so the replay must differ somewhere.
if (benchBreak('replay'))
  segments.slice(0, 400).forEach((segment, slot) => {
    const [first, ...rest] = segment.lexemes;
    if (first)
      segments[slot] = { ...segment, lexemes: [{ ...first, occurrences: first.occurrences + 5 }, ...rest] };
  });
const ranking = new ExpandedKeywordRanking(segments);
const expanded = dataDirSearch(database, dataDir, { keywordIndex: ranking.asIndex(db) }).search;

type Ranked = { url: string | null; object_key: string | null; document_id?: string; segment_id?: string }[];
const sourcesOf = (response: SearchResponse): Ranked =>
  response.results.map((result) => ({ ...result.source, segment_id: result.segment_id }));

/** Per question, its metrics for one ranking and the rank of its first right page (null: not in the 50). */
type Scored = { metrics: Metrics; first: number | null };
type Run = Map<string, Scored>;
const metricsOf = (question: EvaluationQuestion, ranked: Ranked): Scored => {
  const documents = distinctDocuments(ranked);
  return {
    metrics: questionMetrics(documents, question.expected),
    first: firstRelevantRank(documents, question.expected),
  };
};

async function runService(
  mode: 'rrf' | 'keyword',
  searcher: typeof service,
): Promise<{ run: Run; top: Map<string, string> }> {
  const run: Run = new Map();
  const top = new Map<string, string>();
  for (const question of questions) {
    const response = await searcher.search(mode, { query: question.question, limit: LIMIT });
    const ranked = sourcesOf(response);
    run.set(question.id, metricsOf(question, ranked));
    top.set(
      question.id,
      ranked
        .slice(0, 20)
        .map((entry) => entry.segment_id)
        .join(),
    );
  }
  return { run, top };
}

const started = performance.now();
const serviceRrf = await runService('rrf', service);
const serviceKeyword = await runService('keyword', service);
ranking.use([], 0);
const replay = await runService('rrf', expanded);
const same = questions.filter(
  (question) => replay.top.get(question.id) === serviceRrf.top.get(question.id),
).length;
check(
  same === questions.length,
  `at field weight 0 the stand-in ranks as the service (${same}/${questions.length})`,
);

const baselines = await bm25Baselines(db);
const baselineRuns = new Map<string, Run>();
for (const mode of ['bm25', 'bm25-english'] as const) {
  const run: Run = new Map();
  for (const question of questions) {
    const { sources } = await baselines.retrieve(mode, question);
    run.set(question.id, metricsOf(question, sources as Ranked));
  }
  baselineRuns.set(mode, run);
}
console.error(`service and baselines: ${((performance.now() - started) / 1000).toFixed(0)} s`);

// The expansions, built from the corpus alone.
const statistics = corpusStatistics(segments);
const built = new Map<string, ExpansionMap[]>();
const timed = async (name: string, build: () => Promise<ExpansionMap[]> | ExpansionMap[]) => {
  const at = performance.now();
  const cpu = process.cpuUsage();
  const expansions = await build();
  const used = process.cpuUsage(cpu);
  const terms = expansions.reduce((sum, map) => sum + map.size, 0);
  console.error(
    `${name}: ${(terms / segments.length).toFixed(1)} terms per segment, ${((used.user + used.system) / 1e6).toFixed(1)} s CPU, ${((performance.now() - at) / 1000).toFixed(1)} s`,
  );
  built.set(name, expansions);
};
// A source list names sources, `a+b` for their merge, or `all` for every source but `norwegian`.
const wanted = (name: string) =>
  SOURCES.some((source) => source.split('+').includes(name)) ||
  (SOURCES.includes('all') && name !== 'norwegian');
if (wanted('neighbours')) await timed('neighbours', () => neighbourExpansions(segments, statistics, 10));
if (wanted('page')) await timed('page', () => pageExpansions(segments, statistics, 20));
if (wanted('anchors'))
  await timed('anchors', async () => {
    const labels = inboundLabels(segments);
    const unique = [...new Set([...labels.values()].flat())];
    return anchorExpansions(segments, statistics, labels, await lexemesOf(db, 'english', unique));
  });
if (wanted('anchor-context'))
  await timed('anchor-context', async () => {
    const labels = inboundLabels(segments, 60);
    const unique = [...new Set([...labels.values()].flat())];
    return anchorExpansions(segments, statistics, labels, await lexemesOf(db, 'english', unique));
  });
if (wanted('norwegian'))
  await timed('norwegian', async () => {
    const glossary = (await loadGlossary(new URL('../data/glossaries/nb-en.tsv', import.meta.url))).entries;
    const words = new Set<string>();
    for (const [word, targets] of glossary) {
      for (const target of targets) words.add(target);
      const stem = word.endsWith('e') ? word.slice(0, -1) : word;
      for (const ending of norwegianEndings) for (const base of [word, stem]) words.add(base + ending);
    }
    const englishOf = await lexemesOf(db, 'english', [...words]);
    const norwegianOf = await lexemesOf(db, 'norwegian', [...glossary.keys()]);
    // As query translation reads a word the index holds in 20 segments or more as English.
    const common = (lexeme: string) => (statistics.df.get(lexeme) ?? 0) >= 20;
    const reverse = reverseGlossary(glossary, englishOf, norwegianOf, common);
    return readerLanguageExpansions(segments, statistics, reverse, Number(values.salient));
  });
if (wanted('vectors'))
  await timed('vectors', async () => {
    const vectors = await loadSharedWordVectors();
    if (!vectors) throw new Error('no word vectors');
    const lexemeOf = await lexemesOf(db, 'english', vectors.words);
    const lexemes: string[] = [];
    const rowsOf: number[] = [];
    const taken = new Set<string>();
    vectors.words.forEach((word, row) => {
      const parsed = lexemeOf.get(word) ?? [];
      const lexeme = parsed[0];
      // The most frequent word of each indexed lexeme stands for it.
      if (parsed.length !== 1 || !lexeme || taken.has(lexeme) || (statistics.df.get(lexeme) ?? 0) < 2) return;
      taken.add(lexeme);
      lexemes.push(lexeme);
      rowsOf.push(row);
    });
    const matrix = await vectors.rows(rowsOf);
    return vectorExpansions(
      segments,
      statistics,
      { lexemes, matrix, dimensions: vectors.dimensions },
      { salient: 8, neighbours: 2, minSimilarity: 0.6 },
    );
  });
if (wanted('cooccurrence'))
  await timed('cooccurrence', () =>
    cooccurrenceExpansions(segments, statistics, { salient: 8, neighbours: 3, minShared: 3 }),
  );
for (const source of SOURCES)
  if (source.includes('+'))
    built.set(source, mergeExpansions(...source.split('+').map((part) => built.get(part) ?? [])));
if (SOURCES.includes('all'))
  built.set(
    'all',
    mergeExpansions(
      ...[...built].filter(([name]) => name !== 'norwegian' && !name.includes('+')).map(([, map]) => map),
    ),
  );

const variantRuns = new Map<string, Map<number, Run>>();
for (const name of values['third-list-only'] ? [] : SOURCES) {
  const expansions = built.get(name);
  if (!expansions) continue;
  const byWeight = new Map<number, Run>();
  for (const weight of WEIGHTS) {
    ranking.use(expansions, weight);
    byWeight.set(weight, (await runService('rrf', expanded)).run);
  }
  variantRuns.set(name, byWeight);
  console.error(`${name} done at ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

// --third-list: the expansion as a third RRF list (field weight 1, the plain keyword list kept), fused at each weight.
if (values['third-list'] || values['third-list-only']) {
  const third = new ExpandedKeywordRanking(segments);
  for (const name of SOURCES) {
    const expansions = built.get(name);
    if (!expansions) continue;
    third.use(expansions, 1);
    const byWeight = new Map<number, Run>();
    for (const weight of WEIGHTS) {
      const fused = dataDirSearch(database, dataDir, { thirdList: third.asThirdList(db, weight) }).search;
      byWeight.set(weight, (await runService('rrf', fused)).run);
    }
    variantRuns.set(`third list: ${name}`, byWeight);
    console.error(`third list ${name} done at ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
}

// The table: per set, all questions and paraphrases.
const groups: [string, EvaluationQuestion[]][] = [];
for (const file of new Set(questions.map((question) => question.file))) {
  const inFile = questions.filter((question) => question.file === file);
  groups.push([file, inFile]);
  groups.push([`${file} paraphrase`, inFile.filter((question) => question.style === 'paraphrase')]);
}
groups.push(['all', questions]);
const mean = (run: Run, among: readonly EvaluationQuestion[]) => ({
  ...meanMetrics(among.map((question) => (run.get(question.id) as Scored).metrics)),
  found: among.filter((question) => run.get(question.id)?.first != null).length / Math.max(among.length, 1),
});
function row(label: string, run: Run) {
  const cells = groups.map(([, among]) => {
    const metrics = mean(run, among);
    return `${metrics.hit_at_5.toFixed(3)} / ${metrics.mrr_at_10.toFixed(3)} / ${metrics.found.toFixed(3)}`;
  });
  console.log(`| ${label} | ${cells.join(' | ')} |`);
}
console.log(`${questions.length} dev questions (${FILES.join(', ')}); data dir ${dataDir}`);
console.log(`replay equals the service on ${same}/${questions.length}\n`);
console.log(`| hit@5 / MRR@10 / right page in the 50 | ${groups.map(([label]) => label).join(' | ')} |`);
console.log(`|---|${groups.map(() => '---').join('|')}|`);
for (const [mode, run] of baselineRuns) row(mode, run);
row('service keyword', serviceKeyword.run);
row('service RRF', serviceRrf.run);
for (const [name, byWeight] of variantRuns)
  for (const [weight, run] of byWeight) row(`RRF + ${name} at ${weight}`, run);

// 2-fold: the weight chosen on one half (MRR@10, hit@5 at least the service's) scored on the other.
console.log('\n2-fold cross-validation of the field weight (odd / even questions):\n');
console.log(`| source | weights chosen | ${groups.map(([label]) => label).join(' | ')} |`);
console.log(`|---|---|${groups.map(() => '---').join('|')}|`);
const moved = new Map<string, Run>();
const halves = [questions.filter((_, i) => i % 2 === 0), questions.filter((_, i) => i % 2 === 1)];
for (const [name, byWeight] of variantRuns) {
  const heldOut: Run = new Map();
  const chosen: string[] = [];
  for (const [fit, held] of [
    [halves[0], halves[1]],
    [halves[1], halves[0]],
  ] as const) {
    const floor = mean(serviceRrf.run, fit ?? []);
    let best = { weight: 0, run: serviceRrf.run, mrr: floor.mrr_at_10 };
    for (const [weight, run] of byWeight) {
      const metrics = mean(run, fit ?? []);
      if (metrics.hit_at_5 + 1e-9 >= floor.hit_at_5 && metrics.mrr_at_10 > best.mrr + 1e-9)
        best = { weight, run, mrr: metrics.mrr_at_10 };
    }
    chosen.push(String(best.weight));
    for (const question of held ?? []) heldOut.set(question.id, best.run.get(question.id) as Scored);
  }
  const cells = groups.map(([, among]) => {
    const metrics = mean(heldOut, among);
    return `${metrics.hit_at_5.toFixed(3)} / ${metrics.mrr_at_10.toFixed(3)}`;
  });
  console.log(`| ${name} | ${chosen.join(', ')} | ${cells.join(' | ')} |`);
  moved.set(name, heldOut);
}
// Which questions the held-out weights moved: first right page, service -> expanded.
for (const [name, heldOut] of moved) {
  const changes = questions
    .map((question) => ({
      id: question.id,
      from: serviceRrf.run.get(question.id)?.first,
      to: heldOut.get(question.id)?.first,
    }))
    .filter((entry) => entry.from !== entry.to)
    .map((entry) => `${entry.id} ${entry.from ?? '-'}->${entry.to ?? '-'}`);
  console.log(
    `\n${name}, 2-fold, first right page moved (- : not in the 50): ${changes.join(', ') || 'none'}`,
  );
}
await database.close();
finish();
