/**
 * npm run bench:semantic-vectors -- --reuse DATA_DIR [--show LABEL]...
 *
 * Issue 34: can the shipped English word vectors (wink 100d, src/embedding/word-vectors.ts)
 * make a vector half that adds to keyword search? On a corpus bench:quality ingested, the
 * **dev split of bench/questions/postgres-docs.jsonl only** (80 questions) is searched through
 * the search service (keyword list of 50, the hash embedder's vector list, RRF with the rerank
 * on). Sentence vectors for every segment are built in memory from the word vectors: plain
 * mean, IDF-weighted, SIF (a / (a + p(w)) with corpus word frequencies, a = 1e-3 or 1e-4, or
 * with p(w) from the word vectors' own frequency order, "sif-rank"), over the text alone or
 * with title and headings at twice a text word ("head2"), with or without the first principal
 * component removed ("-pc"). Each is measured alone, fused into RRF (replayed here with the
 * same k and rerank) as a third list or in place of the hash list, English questions only or
 * all, and as a rerank feature (cosine, min-max scaled over the candidates). Also RRF's k and
 * the service's query expansion and translation switched off. `--show LABEL` prints, for that
 * row, the dev questions whose first relevant rank changed against the service's RRF.
 *
 * Check: the replay of the service's fusion and rerank gives the service's rankings on every
 * question (exit 1 otherwise), so the other rows measure the change they name and nothing else.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { loadSharedWordVectors } from '../src/embedding/word-vectors.js';
import { distinctDocuments, meanMetrics, questionMetrics } from '../src/evaluation/metrics.js';
import { parseQuestions } from '../src/evaluation/questions.js';
import { analyseQuery, candidateContext, reorder, rerankFeatures } from '../src/search/rerank.js';
import { abort, check, finish } from './lib/checks.js';
import {
  fuseRanked,
  headingsOf,
  loadIndexedSegments,
  openDataDirSearch,
  rerankCandidatesOf,
} from './lib/data-dir-search.js';

const { values } = parseArgs({
  options: { reuse: { type: 'string' }, show: { type: 'string', multiple: true } },
});
if (!values.reuse) abort('--reuse DATA_DIR is required (a data dir bench:quality filled)');
const dataDir = values.reuse as string;
const SPLIT = 'dev';
const questions = parseQuestions(await readFile('bench/questions/postgres-docs.jsonl', 'utf8')).filter(
  (q) => q.split === SPLIT,
);
const { database, search } = await openDataDirSearch(dataDir);
const wv = (await loadSharedWordVectors()) as NonNullable<Awaited<ReturnType<typeof loadSharedWordVectors>>>;
const D = wv.dimensions;
/** Every row in memory: this bench embeds whole segments, word by word. */
const allRows = await wv.rows(wv.words.map((_, row) => row));

const indexed = await loadIndexedSegments(database);
const { segments } = indexed;
const byId = indexed.indexOf;
const heading = headingsOf;
const WORD = /[a-z][a-z0-9_]*/g;
const tokens = (text: string) => text.toLowerCase().match(WORD) ?? [];
const segTokens = segments.map((s) => ({
  text: tokens(s.text),
  head: tokens([s.title ?? '', ...heading(s)].join(' ')),
}));
const freq = new Map<string, number>();
const df = new Map<string, number>();
let total = 0;
for (const t of segTokens) {
  for (const w of [...t.text, ...t.head]) {
    freq.set(w, (freq.get(w) ?? 0) + 1);
    total++;
  }
  for (const w of new Set([...t.text, ...t.head])) df.set(w, (df.get(w) ?? 0) + 1);
}
const N = segments.length;
type Weighting = (w: string) => number;
const weightings: Record<string, Weighting> = {
  mean: () => 1,
  idf: (w) => Math.log((N + 1) / ((df.get(w) ?? 0) + 1)),
  'sif-3': (w) => 1e-3 / (1e-3 + (freq.get(w) ?? 0) / total),
  'sif-4': (w) => 1e-4 / (1e-4 + (freq.get(w) ?? 0) / total),
  // Zipf estimate from the word vectors' own frequency order: no corpus statistics needed.
  'sif-rank': (w) => {
    const row = wv.indexOf(w);
    const p = row === undefined ? 0 : 1 / ((row + 10) * Math.log(wv.words.length));
    return 1e-4 / (1e-4 + p);
  },
};

function embed(words: string[], weight: Weighting, headWords: string[] = [], headFactor = 0): Float32Array {
  const v = new Float32Array(D);
  const add = (w: string, f: number) => {
    const row = wv.indexOf(w);
    if (row === undefined) return;
    const x = weight(w) * f;
    for (let d = 0; d < D; d++) v[d] = (v[d] as number) + x * (allRows[row * D + d] as number);
  };
  for (const w of words) add(w, 1);
  for (const w of headWords) add(w, headFactor);
  return v;
}
function unit(v: Float32Array) {
  let s = 0;
  for (const x of v) s += x * x;
  if (s > 0) for (let d = 0; d < D; d++) v[d] = (v[d] as number) / Math.sqrt(s);
  return v;
}
function firstPc(vs: Float32Array[]): Float32Array {
  const c = new Float64Array(D * D);
  for (const v of vs)
    for (let i = 0; i < D; i++)
      for (let j = 0; j < D; j++)
        c[i * D + j] = (c[i * D + j] as number) + (v[i] as number) * (v[j] as number);
  let u = new Float64Array(D).fill(1);
  for (let it = 0; it < 100; it++) {
    const n = new Float64Array(D);
    for (let i = 0; i < D; i++)
      for (let j = 0; j < D; j++) n[i] = (n[i] as number) + (c[i * D + j] as number) * (u[j] as number);
    const len = Math.hypot(...n);
    u = n.map((x) => x / len);
  }
  return Float32Array.from(u);
}
function removePc(v: Float32Array, pc: Float32Array | undefined) {
  if (!pc) return v;
  let dot = 0;
  for (let d = 0; d < D; d++) dot += (v[d] as number) * (pc[d] as number);
  for (let d = 0; d < D; d++) v[d] = (v[d] as number) - dot * (pc[d] as number);
  return v;
}
const cos = (a: Float32Array, b: Float32Array) => {
  let s = 0;
  for (let d = 0; d < D; d++) s += (a[d] as number) * (b[d] as number);
  return s;
};

interface Variant {
  label: string;
  weighting: string;
  headFactor: number;
  pc: boolean;
}
const variants: Variant[] = [];
for (const weighting of Object.keys(weightings))
  for (const headFactor of [0, 2])
    for (const pc of [false, true])
      variants.push({
        label: `${weighting} head${headFactor}${pc ? ' -pc' : ''}`,
        weighting,
        headFactor,
        pc,
      });

// Per question: the keyword list, the hash vector list, the service's rrf (rerank off and on).
const asked = [] as {
  q: (typeof questions)[number];
  keyword: { id: string; raw: number }[];
  hash: { id: string; raw: number }[];
  rrfOn: string[];
}[];
for (const q of questions) {
  const kw = await search.search('keyword', { query: q.question, limit: 200 });
  const vec = await search.search('vector', { query: q.question, limit: 50 });
  const on = await search.search('rrf', { query: q.question, limit: 50 });
  asked.push({
    q,
    keyword: kw.results.map((r) => ({ id: r.segment_id, raw: r.score })),
    hash: vec.results.map((r) => ({ id: r.segment_id, raw: r.score })),
    rrfOn: on.results.map((r) => r.segment_id),
  });
}
const src = (id: string) => {
  const s = segments[byId.get(id) as number] as (typeof segments)[number];
  return {
    url: s.url,
    object_key: s.storage_key ?? (s.url ? null : s.source_key),
    document_id: s.document_id,
  };
};
const metricsOf = (lists: string[][]) =>
  meanMetrics(
    lists.map((ids, i) =>
      questionMetrics(distinctDocuments(ids.map(src)), (asked[i] as (typeof asked)[number]).q.expected),
    ),
  );
const paraIdx = asked.map((a, i) => (a.q.style === 'paraphrase' ? i : -1)).filter((i) => i >= 0);
const firstRank = (ids: string[], i: number) =>
  distinctDocuments(ids.map(src)).findIndex(
    (d) => questionMetrics([d], (asked[i] as (typeof asked)[number]).q.expected).hit_at_1 === 1,
  ) + 1;
const fmt2 = (label: string, lists: string[][]) => {
  if (values.show?.includes(label)) {
    const moved = lists
      .map((ids, i) => ({
        id: (asked[i] as (typeof asked)[number]).q.id,
        before: firstRank((asked[i] as (typeof asked)[number]).rrfOn, i),
        after: firstRank(ids, i),
      }))
      .filter((entry) => entry.before !== entry.after)
      .map((entry) => `${entry.id} ${entry.before || '-'}->${entry.after || '-'}`);
    console.log(`moved (${label}): ${moved.join(', ') || 'none'}`);
  }
  const all = metricsOf(lists);
  const para = meanMetrics(
    paraIdx.map((i) =>
      questionMetrics(
        distinctDocuments((lists[i] as string[]).map(src)),
        (asked[i] as (typeof asked)[number]).q.expected,
      ),
    ),
  );
  console.log(
    `| ${label} | ${all.hit_at_5.toFixed(3)} | ${all.mrr_at_10.toFixed(3)} | ${para.hit_at_5.toFixed(3)} | ${para.mrr_at_10.toFixed(3)} |`,
  );
};

console.log(`${asked.length} questions (split ${SPLIT}); ${N} segments in ${dataDir}\n`);
console.log('| ranking | hit@5 | MRR@10 | para hit@5 | para MRR |\n|---|---|---|---|---|');
fmt2(
  'service rrf (rerank on)',
  asked.map((a) => a.rrfOn),
);
fmt2(
  'keyword',
  asked.map((a) => a.keyword.map((r) => r.id)),
);
fmt2(
  'hash vector',
  asked.map((a) => a.hash.map((r) => r.id)),
);

function reranked(
  a: (typeof asked)[number],
  fused: { id: string; score: number }[],
  extra?: (id: string) => number,
  extraWeight = 0,
  k = 60,
) {
  const cands = rerankCandidatesOf(fused, a.keyword, indexed);
  const an = analyseQuery(a.q.question);
  const ctx = candidateContext(cands);
  const feats = cands.map((c) => rerankFeatures(an, c, ctx));
  if (extra && extraWeight) {
    const xs = cands.map((c) => extra(c.segment_id));
    const max = Math.max(...xs);
    const min = Math.min(...xs);
    cands.forEach((c, i) => {
      c.score += (extraWeight * (max > min ? ((xs[i] as number) - min) / (max - min) : 0)) / 61;
    });
  }
  return reorder(cands, feats, { k, depth: 50 }).map((c) => c.segment_id);
}
// Sanity: keyword+hash fused at 0.05 and reranked should be the service's rrf.
const replayed = asked.map((a) =>
  reranked(
    a,
    fuseRanked(
      [
        { ids: a.keyword.slice(0, 50).map((r) => r.id), weight: 1 },
        { ids: a.hash.map((r) => r.id), weight: 0.05 },
      ],
      60,
    ),
  ),
);
fmt2('replayed rrf: kw 1 + hash 0.05, k 60, rerank', replayed);
const differing = asked.filter(
  (a, i) => (replayed[i] as string[]).slice(0, 10).join() !== a.rrfOn.slice(0, 10).join(),
);
check(
  differing.length === 0,
  `the replayed RRF differs from the service's in the top 10 of ${differing.map((a) => a.q.id).join(', ')}`,
);
fmt2(
  'kw only + rerank',
  asked.map((a) =>
    reranked(a, fuseRanked([{ ids: a.keyword.slice(0, 50).map((r) => r.id), weight: 1 }], 60)),
  ),
);
for (const w of [0, 0.02, 0.1, 0.2, 0.5])
  fmt2(
    `kw + hash ${w} + rerank`,
    asked.map((a) =>
      reranked(
        a,
        fuseRanked(
          [
            { ids: a.keyword.slice(0, 50).map((r) => r.id), weight: 1 },
            { ids: a.hash.map((r) => r.id), weight: w },
          ],
          60,
        ),
      ),
    ),
  );

for (const k of [20, 40, 60, 100])
  fmt2(
    `replayed rrf at k ${k}`,
    asked.map((a) =>
      reranked(
        a,
        fuseRanked(
          [
            { ids: a.keyword.slice(0, 50).map((r) => r.id), weight: 1 },
            { ids: a.hash.map((r) => r.id), weight: 0.05 },
          ],
          k,
        ),
        undefined,
        0,
        k,
      ),
    ),
  );
for (const options of [{ expand: false }, { translate: false }, { expand: false, translate: false }]) {
  const lists = [] as string[][];
  for (const a of asked)
    lists.push(
      (await search.search('rrf', { query: a.q.question, limit: 50, ...options })).results.map(
        (r) => r.segment_id,
      ),
    );
  fmt2(`service rrf ${JSON.stringify(options)}`, lists);
}
for (const variant of variants) {
  const weight = weightings[variant.weighting] as Weighting;
  const vecs = segTokens.map((t) => embed(t.text, weight, t.head, variant.headFactor));
  const pc = variant.pc ? firstPc(vecs.map((v) => unit(Float32Array.from(v)))) : undefined;
  for (const v of vecs) unit(removePc(unit(v), pc));
  const vectorLists = asked.map((a) => {
    const qv = unit(removePc(unit(embed(tokens(a.q.question), weight)), pc));
    const scored = vecs.map((v, i) => ({ i, s: cos(qv, v) }));
    scored.sort((x, y) => y.s - x.s);
    return {
      ids: scored.slice(0, 50).map((x) => (segments[x.i] as (typeof segments)[number]).segment_id),
      qv,
    };
  });
  fmt2(
    `${variant.label}: vector only`,
    vectorLists.map((l) => l.ids),
  );
  for (const w of [0.05, 0.1, 0.2])
    fmt2(
      `${variant.label}: English only: kw + hash 0.05 + it ${w} + rerank`,
      asked.map((a, i) =>
        reranked(
          a,
          fuseRanked(
            [
              { ids: a.keyword.slice(0, 50).map((r) => r.id), weight: 1 },
              { ids: a.hash.map((r) => r.id), weight: 0.05 },
              { ids: (vectorLists[i] as { ids: string[] }).ids, weight: a.q.language === 'en' ? w : 0 },
            ],
            60,
          ),
        ),
      ),
    );
  for (const w of [0.1, 0.3, 1])
    fmt2(
      `${variant.label}: kw + it ${w} + rerank`,
      asked.map((a, i) =>
        reranked(
          a,
          fuseRanked(
            [
              { ids: a.keyword.slice(0, 50).map((r) => r.id), weight: 1 },
              { ids: (vectorLists[i] as { ids: string[] }).ids, weight: w },
            ],
            60,
          ),
        ),
      ),
    );
  for (const w of [0.05, 0.1, 0.2, 0.4])
    fmt2(
      `${variant.label}: rrf + cosine feature ${w}`,
      asked.map((a, i) => {
        const qv = (vectorLists[i] as { qv: Float32Array }).qv;
        return reranked(
          a,
          fuseRanked(
            [
              { ids: a.keyword.slice(0, 50).map((r) => r.id), weight: 1 },
              { ids: a.hash.map((r) => r.id), weight: 0.05 },
            ],
            60,
          ),
          (id) => cos(qv, vecs[byId.get(id) as number] as Float32Array),
          w,
        );
      }),
    );
}
await database.close();
finish();
