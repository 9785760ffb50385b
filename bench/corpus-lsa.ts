/**
 * npm run bench:corpus-lsa -- --reuse DATA_DIR [--show LABEL]... [--chosen]
 *
 * Issue 34, third pass: a semantic half learned from the corpus itself, and pseudo-relevance
 * feedback. On a corpus bench:quality ingested, the **dev split of
 * bench/questions/postgres-docs.jsonl only** (80 questions):
 * - LSA: every segment's text (title and headings counted twice) through the English
 *   analyzer of the BM25 baseline (Porter stems, Lucene's stop words), weighted
 *   (1 + ln tf) x idf, rows at unit length, terms in at least 2 segments; a truncated SVD
 *   (src/search/truncated-svd.ts) of rank 100 or 200, by the service's code
 *   (src/search/lsa-model.ts). A question is folded in from its own terms, plus the service's translations (Norwegian questions) and word-vector expansions
 *   at their weights, so Norwegian questions reach the English corpus as keyword search does.
 * - LSA with Rocchio feedback: the question's LSA vector plus beta x the mean of the top m
 *   keyword segments' vectors.
 * - RM3-style keyword feedback: the question plus the n words that weigh most in the top m
 *   keyword segments (tf / length x idf, by rank), searched again by the service's keyword
 *   search, as a list of its own.
 * Each is fused into the service's RRF (replayed here with the same k 60 and rerank), as a third
 * list or in place of the hash list, at several weights.
 *
 * Check: the replay of the service's fusion and rerank gives the service's rankings on every
 * question (exit 1 otherwise), and the SVD's first component satisfies A v = sigma u. With
 * --chosen, only the configuration chosen (the service's lsaDefaults), then the service itself
 * with WEIR_SEARCH_LSA=on (bench/lib/service-lsa.ts): its build's time and memory, its latency
 * against RRF without the list, and its rankings, which must be the replay's on every question.
 * Run with NODE_OPTIONS=--expose-gc for the memory kept after the build.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { stemmer } from 'stemmer';
import { distinctDocuments, meanMetrics, questionMetrics } from '../src/evaluation/metrics.js';
import { parseQuestions } from '../src/evaluation/questions.js';
import { englishStopWords, tokenizeEnglish } from '../src/search/english-analyzer.js';
import {
  compareLsaSegments,
  foldIn,
  type LsaModel,
  lsaDefaults,
  lsaModelOf,
  lsaRanking,
  questionTerms,
  termSegmentMatrix,
} from '../src/search/lsa-model.js';
import { analyseQuery, candidateContext, reorder, rerankFeatures } from '../src/search/rerank.js';
import { svdDefaults, truncatedSvd } from '../src/search/truncated-svd.js';
import { abort, check, finish } from './lib/checks.js';
import {
  fuseRanked,
  headingsOf,
  loadIndexedSegments,
  openDataDirSearch,
  rerankCandidatesOf,
} from './lib/data-dir-search.js';
import { askService, buildServiceLsa } from './lib/service-lsa.js';

const { values } = parseArgs({
  options: {
    reuse: { type: 'string' },
    show: { type: 'string', multiple: true },
    questions: { type: 'string', default: 'bench/questions/postgres-docs.jsonl' },
    split: { type: 'string', default: 'dev' },
    chosen: { type: 'boolean', default: false },
    // Another seed for the SVD's sketch shows how much the figures owe to it (the service's is svdDefaults.seed).
    seed: { type: 'string', default: String(svdDefaults.seed) },
  },
});
const SEED = Number(values.seed);
if (!values.reuse) abort('--reuse DATA_DIR is required (a data dir bench:quality filled)');
const dataDir = values.reuse as string;
const SPLIT = values.split as string;
// The grid is searched on the dev split only; other questions see only the configuration chosen there.
if (SPLIT !== 'dev' && !values.chosen) abort('only the dev split is searched; other questions need --chosen');
const questions = parseQuestions(await readFile(values.questions as string, 'utf8')).filter(
  (q) => SPLIT === 'all' || q.split === SPLIT,
);
// The blind set is reported by bench:quality and never measured here (bench/questions/README.md).
if (questions.some((q) => q.split === 'blind')) abort('the blind set is not measured by this bench');
if (questions.length === 0) abort(`no questions of split ${SPLIT} in ${values.questions}`);
const { database, search } = await openDataDirSearch(dataDir);
// The service's build first, so its memory is measured before this bench's own SVD.
const services =
  values.chosen && SEED === svdDefaults.seed ? await buildServiceLsa(database, dataDir) : undefined;
const indexed = await loadIndexedSegments(database);
const { segments } = indexed;
const N = segments.length;
const byId = indexed.indexOf;
const heading = headingsOf;

// ---- the term-segment matrix and its SVD (the service's code: src/search/lsa-model.ts)
const started = performance.now();
const cpuStarted = process.cpuUsage();
// In the service's order, not the id order of `segments`.
const lsaOrder = [...segments].sort(compareLsaSegments);
const lsaPosition = new Map(lsaOrder.map((s, i) => [s.segment_id, i]));
const tsm = termSegmentMatrix(lsaOrder.map((s) => ({ title: s.title, headings: heading(s), text: s.text })));
const RANK = lsaDefaults.rank;
const svd = truncatedSvd(tsm.matrix, RANK, { seed: SEED });
console.log(
  `${N} segments, ${tsm.terms.size} terms, ${tsm.matrix.cols.length} nonzeros; matrix and SVD rank ${RANK} in ` +
    `${((performance.now() - started) / 1000).toFixed(1)} s wall, ${(process.cpuUsage(cpuStarted).user / 1e6).toFixed(1)} s CPU`,
);
{
  // A v_1 = sigma_1 u_1
  const a = tsm.matrix;
  let residual = 0;
  let norm = 0;
  for (let r = 0; r < a.rows; r++) {
    let av = 0;
    for (let p = a.rowStart[r] as number; p < (a.rowStart[r + 1] as number); p++)
      av += (a.vals[p] as number) * (svd.v[(a.cols[p] as number) * RANK] as number);
    const su = (svd.sigma[0] as number) * (svd.u[r * RANK] as number);
    residual += (av - su) ** 2;
    norm += su ** 2;
  }
  check(
    Math.sqrt(residual / norm) < 1e-3,
    `SVD first component: relative residual ${Math.sqrt(residual / norm)}`,
  );
}
const models = new Map([100, 200].map((k) => [k, lsaModelOf(tsm, svd, k)]));
const kept = tsm.terms;
const idf = tsm.idf;

// ---- the service's lists per question
interface Asked {
  q: (typeof questions)[number];
  keyword: { id: string; raw: number }[];
  hash: string[];
  rrfOn: string[];
  terms: Map<string, number>;
}
const asked: Asked[] = [];
for (const q of questions) {
  const kw = await search.search('keyword', { query: q.question, limit: 200 });
  const vec = await search.search('vector', { query: q.question, limit: 50 });
  const on = await search.search('rrf', { query: q.question, limit: 50 });
  const p = kw.parameters as {
    query_translations?: { lexeme: string; weight: number }[];
    query_expansions?: { lexeme: string }[];
  };
  const terms = questionTerms(q.question, p.query_translations ?? [], p.query_expansions ?? []);
  asked.push({
    q,
    keyword: kw.results.map((r) => ({ id: r.segment_id, raw: r.score })),
    hash: vec.results.map((r) => r.segment_id),
    rrfOn: on.results.map((r) => r.segment_id),
    terms,
  });
}

// ---- scoring, fusion and the rerank replayed
const src = (id: string) => {
  const s = segments[byId.get(id) as number] as (typeof segments)[number];
  return { url: s.url, object_key: null, document_id: s.document_id };
};
const firstRank = (ids: string[], a: Asked) =>
  distinctDocuments(ids.map(src)).findIndex((d) => questionMetrics([d], a.q.expected).hit_at_1 === 1) + 1;
const perQuestion = new Map<string, ReturnType<typeof questionMetrics>[]>();
function report(label: string, lists: string[][]) {
  const per = lists.map((ids, i) =>
    questionMetrics(distinctDocuments(ids.map(src)), (asked[i] as Asked).q.expected),
  );
  perQuestion.set(label, per);
  const all = meanMetrics(per);
  const para = meanMetrics(per.filter((_, i) => (asked[i] as Asked).q.style === 'paraphrase'));
  const no = meanMetrics(per.filter((_, i) => (asked[i] as Asked).q.language === 'no'));
  const f = (x: number) => x.toFixed(3);
  console.log(
    `| ${label} | ${f(all.hit_at_5)} | ${f(all.mrr_at_10)} | ${f(para.hit_at_5)} | ${f(no.hit_at_5)} |`,
  );
  if (values.show?.includes(label)) {
    const moved = lists
      .map((ids, i) => {
        const a = asked[i] as Asked;
        return { id: a.q.id, before: firstRank(a.rrfOn, a), after: firstRank(ids, a) };
      })
      .filter((m) => m.before !== m.after)
      .map((m) => `${m.id} ${m.before || '-'}->${m.after || '-'}`);
    console.log(`moved (${label}): ${moved.join(', ') || 'none'}`);
  }
}
function reranked(a: Asked, fused: { id: string; score: number }[]): string[] {
  const cands = rerankCandidatesOf(fused, a.keyword, indexed);
  const an = analyseQuery(a.q.question);
  const ctx = candidateContext(cands);
  return reorder(
    cands,
    cands.map((c) => rerankFeatures(an, c, ctx)),
    { k: 60, depth: 50 },
  ).map((c) => c.segment_id);
}
const kw50 = (a: Asked) => a.keyword.slice(0, 50).map((r) => r.id);
const withList = (extra: string[][], w: number, hashWeight = 0.05) =>
  asked.map((a, i) =>
    reranked(
      a,
      fuseRanked([
        { ids: kw50(a), weight: 1 },
        { ids: a.hash, weight: hashWeight },
        { ids: extra[i] as string[], weight: w },
      ]),
    ),
  );

console.log(`\n${asked.length} questions (split ${SPLIT})\n`);
console.log('| ranking | hit@5 | MRR@10 | para hit@5 | Norwegian hit@5 |\n|---|---|---|---|---|');
report(
  'service rrf',
  asked.map((a) => a.rrfOn),
);
report(
  'keyword',
  asked.map((a) => a.keyword.map((r) => r.id)),
);
const replayed = withList(
  asked.map(() => []),
  0,
);
report('replayed rrf', replayed);
check(
  asked.every((a, i) => (replayed[i] as string[]).slice(0, 10).join() === a.rrfOn.slice(0, 10).join()),
  'the replayed RRF gives the service ranking',
);
report(
  'kw only + rerank',
  asked.map((a) => reranked(a, fuseRanked([{ ids: kw50(a), weight: 1 }]))),
);

// ---- LSA, with and without Rocchio feedback
/** The 50 segments nearest the question in LSA space at rank k, after feedback from the top m keyword segments. */
function lsaLists(k: number, m: number, beta: number): string[][] {
  const model = models.get(k) as LsaModel;
  return asked.map((a) =>
    lsaRanking(
      model,
      foldIn(model, a.terms),
      kw50(a)
        .slice(0, m)
        .map((id) => lsaPosition.get(id) as number),
      { depth: 50, feedbackWeight: beta },
    ).map((x) => (lsaOrder[x.segment] as (typeof segments)[number]).segment_id),
  );
}
// The service's constants (WEIR_SEARCH_LSA=on) are the configuration chosen here.
const CHOSEN = {
  k: lsaDefaults.rank,
  m: lsaDefaults.feedback,
  beta: lsaDefaults.feedbackWeight,
  weight: lsaDefaults.weight,
};
if (values.chosen) {
  const rankingStarted = performance.now();
  const lists = lsaLists(CHOSEN.k, CHOSEN.m, CHOSEN.beta);
  const perQuestion = (performance.now() - rankingStarted) / asked.length;
  console.log(`LSA ranking (fold-in, feedback, ${N} cosines): ${perQuestion.toFixed(2)} ms a question`);
  report('chosen: lsa+rocchio alone', lists);
  const fused = withList(lists, CHOSEN.weight);
  report(`chosen: rrf + lsa+rocchio at ${CHOSEN.weight}`, fused);
  if (services) {
    const lists = await askService(
      services,
      asked.map((a) => ({ id: a.q.id, question: a.q.question })),
    );
    report('service, WEIR_SEARCH_LSA=on', lists);
    check(
      lists.every((ids, i) => ids.slice(0, 10).join() === (fused[i] as string[]).slice(0, 10).join()),
      'the service with LSA gives the rankings of the chosen replay',
    );
  }
  await database.close();
  finish();
}
for (const k of [100, 200]) {
  const variants: [string, string[][]][] = [[`lsa`, lsaLists(k, 0, 0)]];
  for (const m of [3, 10])
    for (const beta of [0.5, 1]) variants.push([`lsa+rocchio m${m} b${beta}`, lsaLists(k, m, beta)]);
  for (const [name, lists] of variants) {
    report(`${name} k${k} alone`, lists);
    for (const w of [0.1, 0.2, 0.3, 0.5]) report(`rrf + ${name} k${k} at ${w}`, withList(lists, w));
    for (const w of [0.2, 0.5]) report(`kw + ${name} k${k} at ${w} (no hash)`, withList(lists, w, 0));
  }
}

// ---- RM3-style keyword feedback
const segWords = (i: number) =>
  tokenizeEnglish((segments[i] as (typeof segments)[number]).text)
    .map((w) => w.toLowerCase())
    .filter((w) => w.length > 2 && !englishStopWords.has(w) && !/^\d/.test(w));
for (const m of [5, 10])
  for (const n of [3, 6]) {
    const lists: string[][] = [];
    for (const a of asked) {
      const own = new Set(a.terms.keys());
      const weight = new Map<string, number>();
      kw50(a)
        .slice(0, m)
        .forEach((id, r) => {
          const words = segWords(byId.get(id) as number);
          for (const w of words) {
            const c = kept.get(stemmer(w));
            if (c === undefined || own.has(stemmer(w))) continue;
            weight.set(w, (weight.get(w) ?? 0) + (idf[c] as number) / words.length / (r + 1));
          }
        });
      const added = [...weight]
        .sort((x, y) => y[1] - x[1])
        .slice(0, n)
        .map(([w]) => w);
      const r = await search.search('keyword', { query: `${a.q.question} ${added.join(' ')}`, limit: 50 });
      lists.push(r.results.map((x) => x.segment_id));
    }
    report(`rm3 m${m} n${n} keyword alone`, lists);
    for (const w of [0.3, 0.5, 1]) report(`rrf + rm3 m${m} n${n} at ${w}`, withList(lists, w));
  }
crossValidate();
await database.close();
finish();

/**
 * 2-fold cross-validation inside the split: each half (odd and even positions) picks the fused
 * row with the best hit@5, then MRR@10, and is scored on the other half, against the service's RRF there.
 */
function crossValidate() {
  const candidates = [...perQuestion.keys()].filter((l) => l.startsWith('rrf + '));
  const mean = (label: string, half: number, of: 'hit_at_5' | 'mrr_at_10') => {
    const per = (perQuestion.get(label) ?? []).filter((_, i) => i % 2 === half);
    return per.reduce((s, x) => s + x[of], 0) / per.length;
  };
  for (const half of [0, 1]) {
    const best = candidates.reduce((b, l) =>
      mean(l, half, 'hit_at_5') > mean(b, half, 'hit_at_5') ||
      (mean(l, half, 'hit_at_5') === mean(b, half, 'hit_at_5') &&
        mean(l, half, 'mrr_at_10') > mean(b, half, 'mrr_at_10'))
        ? l
        : b,
    );
    const other = 1 - half;
    const f = (x: number) => x.toFixed(3);
    console.log(
      `fold ${half}: picks "${best}"; on the other half hit@5 ${f(mean(best, other, 'hit_at_5'))} MRR@10 ${f(mean(best, other, 'mrr_at_10'))}` +
        ` against the service's ${f(mean('service rrf', other, 'hit_at_5'))} / ${f(mean('service rrf', other, 'mrr_at_10'))}`,
    );
  }
}
