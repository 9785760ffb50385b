/**
 * npm run bench:conversations -- [--count 50000] [--quality-count 6000] [--seed 1] [--skip-pipeline]
 *
 * Two parts, both on fixtures from test/helpers/conversation-fixtures.ts (deterministic from
 * `--seed`, with ground truth):
 *
 * 1. Quality (`--quality-count` conversations, the domain functions the adapters run, with
 *    their defaults): Norwegian filter precision/recall/F1 on texts of 50+ characters, with
 *    Danish and Swedish confusions counted apart and one-liners' verdicts; dedup
 *    precision/recall/F1 against the copies the generator made (conversations of 50+
 *    characters: two different one-liners "takk!" are identical texts, not copies);
 *    clustering ARI and purity on the Norwegian conversations with the offline `hash`
 *    embedder; routine step recall per topic (a true step is recovered when a discovered step
 *    shares at least half its terms with one of its phrasings), precision (distinct true
 *    steps recovered over steps found: a step found twice in two phrasings counts once), and
 *    whether the recovered steps come in the true order.
 * 2. Throughput (`--count` conversations, skipped with --skip-pipeline): one JSONL export
 *    through the whole pipeline of docs/conversations.md on the embedded defaults (PGlite,
 *    in-process broker, `hash` embedder): conversations/s, peak RSS, and per stage the
 *    messages, the summed handler time and the wall span.
 *
 * Exit 1 when a target of issue 19 is missed (filter F1 and dedup F1 >= 0.95, clustering ARI >=
 * 0.7, peak RSS under 2 GB, and at --count 50000 or more the pipeline under 3 minutes), when a
 * pipeline message failed or the execution did not complete within BENCH_TIMEOUT_S.
 * BENCH_DATABASE_URL (an empty database on a PostgreSQL server) and BENCH_BROKER_URL
 * (stomp://...) run the pipeline on the server path instead; its target is 2 minutes.
 * BENCH_BREAK=missed-norwegian: the filter's Norwegian verdicts are dropped to "undetermined",
 * so the Norwegian conversations are missed.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { clusterVectors } from '../src/conversations/clustering.js';
import { type CompactConversation, compactConversation } from '../src/conversations/compact.js';
import { terms } from '../src/conversations/keywords.js';
import { adjustedRandIndex, precisionRecall, purity } from '../src/conversations/metrics.js';
import { findDuplicates } from '../src/conversations/minhash.js';
import { loadNorwegianClassifier } from '../src/conversations/norwegian.js';
import { discoverRoutine, jaccardOf } from '../src/conversations/routines.js';
import { createHashEmbedder } from '../src/embedding/hash-embedder.js';
import { loadSettings } from '../src/settings.js';
import { toJsonl } from '../test/helpers/conversation-exports.js';
import {
  type FixtureConversation,
  generateConversations,
  toNynorsk,
} from '../test/helpers/conversation-fixtures.js';
import { fixtureTopics } from '../test/helpers/conversation-topics.js';
import { benchBreak, check, finish, target } from './lib/checks.js';
import { runTimed, startBenchEngine } from './lib/ingest-corpus.js';
import { printStatementTimes, timeStatements } from './lib/statement-times.js';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '50000' },
    'quality-count': { type: 'string', default: '6000' },
    seed: { type: 'string', default: '1' },
    'skip-pipeline': { type: 'boolean', default: false },
  },
});
const seed = Number(values.seed);
/** BENCH_BREAK=missed-norwegian: every Norwegian verdict of the filter becomes "undetermined". */
const missNorwegian = benchBreak('missed-norwegian');

console.log(
  `machine: ${os.cpus().length} vCPU, ${Math.round(os.totalmem() / 2 ** 30)} GB, node ${process.version}`,
);
await quality(Number(values['quality-count']));
if (!values['skip-pipeline']) await throughput(Number(values.count));
finish();

type QualityItem = { truth: FixtureConversation['truth']; compact: CompactConversation };
type Classify = Awaited<ReturnType<typeof loadNorwegianClassifier>>;
type Clusters = ReturnType<typeof clusterVectors>;

async function quality(count: number) {
  const fixture = generateConversations({ seed, count });
  const items: QualityItem[] = fixture.map((conversation) => ({
    truth: conversation.truth,
    compact: compactConversation({ ...conversation, source_format: 'jsonl' }),
  }));
  console.log(`\n## quality on ${fixture.length} conversations (seed ${seed})`);

  // Norwegian filter.
  const detect = await loadNorwegianClassifier();
  const classify: typeof detect = missNorwegian
    ? (text) => {
        const verdict = detect(text);
        return verdict.verdict === 'norwegian' ? { ...verdict, verdict: 'undetermined' } : verdict;
      }
    : detect;
  filterQuality(items, classify);
  await handWrittenQuality(classify);
  firstMessageQuality(items, classify);
  dedupQuality(items);
  const { norwegian, clusters } = await clusteringQuality(items);
  routineQuality(norwegian, clusters);
}

function isNorwegian(language: string): boolean {
  return language === 'nb' || language === 'nn';
}

/** The filter on whole conversations of 50+ characters, and its verdicts on the one-liners. */
function filterQuality(items: readonly QualityItem[], classify: Classify) {
  const long = items.filter(({ compact }) => plainText(compact).length >= 50);
  const verdicts = long.map(({ truth, compact }) => ({ truth, verdict: classify(plainText(compact)) }));
  const tp = verdicts.filter(
    (v) => isNorwegian(v.truth.language) && v.verdict.verdict === 'norwegian',
  ).length;
  const fpBy = (language: string) =>
    verdicts.filter((v) => v.truth.language === language && v.verdict.verdict === 'norwegian').length;
  const fp = verdicts.filter(
    (v) => !isNorwegian(v.truth.language) && v.verdict.verdict === 'norwegian',
  ).length;
  const fn = verdicts.filter(
    (v) => isNorwegian(v.truth.language) && v.verdict.verdict !== 'norwegian',
  ).length;
  const norwegianUndetermined = verdicts.filter(
    (v) => isNorwegian(v.truth.language) && v.verdict.verdict === 'undetermined',
  ).length;
  const shortOnes = items.filter(({ truth }) => truth.short);
  const shortUndetermined = shortOnes.filter(
    ({ compact }) => classify(plainText(compact)).verdict === 'undetermined',
  );
  const filterScore = precisionRecall(tp, fp, fn);
  console.log('norwegian filter (texts of 50+ characters):', {
    ...filterScore,
    danish_called_norwegian: `${fpBy('da')} of ${verdicts.filter((v) => v.truth.language === 'da').length}`,
    swedish_called_norwegian: `${fpBy('sv')} of ${verdicts.filter((v) => v.truth.language === 'sv').length}`,
    norwegian_left_undetermined: norwegianUndetermined,
    one_liners_undetermined: `${shortUndetermined.length} of ${shortOnes.length}`,
  });
  console.log(
    `norwegian filter F1 ${filterScore.f1} (target >= 0.95: ${target(filterScore.f1 >= 0.95, `Norwegian filter F1 ${filterScore.f1} >= 0.95`)})`,
  );
}

/** Text not made from templates: the question set's hand-written questions (bench/questions). */
async function handWrittenQuality(classify: Classify) {
  const questions = (await readFile(new URL('./questions/postgres-docs.jsonl', import.meta.url), 'utf8'))
    .split('\n')
    .filter((line) => line.trim().startsWith('{'))
    .map((line) => JSON.parse(line) as { question: string; language: string });
  const asked = questions.map((question) => ({
    language: question.language,
    verdict: classify(question.question).verdict,
  }));
  const verdictsOf = (language: string, verdict: string) =>
    asked.filter((item) => item.language === language && item.verdict === verdict).length;
  console.log('norwegian filter (hand-written questions of bench/questions, 20-150 characters):', {
    norwegian: `${verdictsOf('no', 'norwegian')} of ${verdictsOf('no', 'norwegian') + verdictsOf('no', 'other') + verdictsOf('no', 'undetermined')} kept, ${verdictsOf('no', 'undetermined')} undetermined, ${verdictsOf('no', 'other')} called another language`,
    english: `${verdictsOf('en', 'norwegian')} of ${asked.filter((item) => item.language === 'en').length} called Norwegian`,
  });
}

/** Harder: the first user message alone (a question with a line of context, 100-250 characters). */
function firstMessageQuality(items: readonly QualityItem[], classify: Classify) {
  const firstTurns = items
    .filter(({ truth }) => !truth.short)
    .map(({ truth, compact }) => ({
      truth,
      text: compact.turns.find((turn) => turn.role === 'user')?.text ?? '',
    }))
    .filter(({ text }) => text.length >= 50)
    .map(({ truth, text }) => ({ truth, verdict: classify(text).verdict, length: text.length }));
  const firstTp = firstTurns.filter((v) => isNorwegian(v.truth.language) && v.verdict === 'norwegian').length;
  const firstFp = firstTurns.filter((v) => !isNorwegian(v.truth.language) && v.verdict === 'norwegian');
  const firstFn = firstTurns.filter((v) => isNorwegian(v.truth.language) && v.verdict !== 'norwegian').length;
  console.log('norwegian filter (first user message only):', {
    ...precisionRecall(firstTp, firstFp.length, firstFn),
    danish_called_norwegian: firstFp.filter((v) => v.truth.language === 'da').length,
    swedish_called_norwegian: firstFp.filter((v) => v.truth.language === 'sv').length,
    norwegian_left_undetermined: firstTurns.filter(
      (v) => isNorwegian(v.truth.language) && v.verdict === 'undetermined',
    ).length,
    median_characters: firstTurns.map((v) => v.length).sort((a, b) => a - b)[
      Math.floor(firstTurns.length / 2)
    ],
  });
}

function dedupQuality(items: readonly QualityItem[]) {
  const dedupItems = items.filter(({ compact }) => plainText(compact).length >= 50);
  const started = performance.now();
  const groups = findDuplicates(
    dedupItems.map(({ compact }) => ({
      id: compact.conversation_id,
      text: compact.text,
      content_hash: compact.content_hash,
    })),
  );
  const dedupSeconds = (performance.now() - started) / 1000;
  const truthOf = new Map(dedupItems.map(({ compact, truth }) => [compact.conversation_id, truth]));
  const root = (id: string) => truthOf.get(id)?.duplicate_of ?? id;
  let dedupTp = 0;
  let dedupFp = 0;
  for (const group of groups)
    for (const duplicate of group.duplicates) {
      if (root(duplicate.id) === root(group.canonical)) dedupTp++;
      else dedupFp++;
    }
  const copies = dedupItems.filter(({ truth }) => truth.duplicate_of).length;
  const dedupScore = precisionRecall(dedupTp, dedupFp, copies - dedupTp);
  console.log('dedup (MinHash 64 permutations, 16 bands, Jaccard >= 0.8):', {
    ...dedupScore,
    exact_copies: dedupItems.filter(({ truth }) => truth.exact_duplicate).length,
    near_copies: dedupItems.filter(({ truth }) => truth.duplicate_of && !truth.exact_duplicate).length,
    seconds: round(dedupSeconds),
  });
  console.log(
    `dedup F1 ${dedupScore.f1} (target >= 0.95: ${target(dedupScore.f1 >= 0.95, `dedup F1 ${dedupScore.f1} >= 0.95`)})`,
  );
}

/** Clustering on the Norwegian conversations, as the pipeline does after the filter. */
async function clusteringQuality(items: readonly QualityItem[]) {
  const norwegian = items.filter(
    ({ truth }) => isNorwegian(truth.language) && !truth.short && !truth.duplicate_of,
  );
  const started = performance.now();
  const vectors = await createHashEmbedder().embed(norwegian.map(({ compact }) => compact.text));
  const clusters = clusterVectors(vectors);
  const topicsTruth = norwegian.map(({ truth }) => truth.topic);
  const ari = adjustedRandIndex(topicsTruth, clusters.labels);
  console.log('clustering (hash embedder, k by silhouette):', {
    conversations: norwegian.length,
    true_topics: new Set(topicsTruth).size,
    k: clusters.k,
    ari,
    purity: purity(topicsTruth, clusters.labels),
    seconds: round((performance.now() - started) / 1000),
  });
  console.log(
    `clustering ARI ${round(ari)} (target >= 0.7: ${target(ari >= 0.7, `clustering ARI ${round(ari)} >= 0.7`)})`,
  );
  return { norwegian, clusters };
}

/** Routine step recovery: each predicted cluster's routine against its majority topic. */
function routineQuality(norwegian: readonly QualityItem[], clusters: Clusters) {
  const perTopic: Array<Record<string, unknown>> = [];
  let recovered = 0;
  let trueSteps = 0;
  let discoveredSteps = 0;
  let matchingDiscovered = 0;
  for (let label = 0; label < clusters.k; label++) {
    const members = norwegian.filter((_, index) => clusters.labels[index] === label);
    const topicId = majority(members.map(({ truth }) => truth.topic));
    const topic = fixtureTopics.find((candidate) => candidate.id === topicId);
    if (!topic) continue;
    const routine = discoverRoutine(
      members.map(({ compact }) => ({ conversation_id: compact.conversation_id, turns: compact.turns })),
    );
    const found = routine?.steps ?? [];
    const phrasings = topic.steps.nb.map((pair) =>
      [...pair, ...pair.map(toNynorsk)].map((text) => new Set(terms(text))),
    );
    const matchOf = (text: string) => {
      const own = new Set(terms(text));
      return phrasings.findIndex((variants) => variants.some((variant) => jaccardOf(own, variant) >= 0.5));
    };
    const matches = found.map((step) => matchOf(step.text));
    const recoveredHere = new Set(matches.filter((index) => index >= 0)).size;
    const ordered = matches.filter((index) => index >= 0);
    recovered += recoveredHere;
    trueSteps += phrasings.length;
    discoveredSteps += found.length;
    // A true step found twice (two phrasings not merged) counts once: the second is noise.
    matchingDiscovered += recoveredHere;
    perTopic.push({
      topic: topicId,
      conversations: members.length,
      steps_recovered: `${recoveredHere}/${phrasings.length}`,
      steps_found: found.length,
      in_order: ordered.every((value, index) => index === 0 || value >= (ordered[index - 1] as number)),
      precondition: routine?.preconditions.length ? 'yes' : 'no',
      outcome: routine?.outcome ? 'yes' : 'no',
    });
  }
  console.table(perTopic);
  console.log('routine steps:', {
    recall: round(recovered / Math.max(1, trueSteps)),
    precision: round(matchingDiscovered / Math.max(1, discoveredSteps)),
    steps_found: discoveredSteps,
    true_steps: trueSteps,
  });
}

async function throughput(count: number) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'weir-bench-conv-'));
  const exportDir = path.join(dataDir, 'exports');
  try {
    const fixture: FixtureConversation[] = generateConversations({ seed: seed + 1, count });
    await mkdir(exportDir, { recursive: true });
    await writeFile(path.join(exportDir, 'conversations.jsonl'), toJsonl(fixture));
    const tokens = fixture.reduce(
      (sum, conversation) =>
        sum + compactConversation({ ...conversation, source_format: 'jsonl' }).token_count,
      0,
    );
    console.log(
      `\n## pipeline on ${fixture.length} conversations, ${tokens} tokens (${process.env.BENCH_DATABASE_URL ? 'PostgreSQL server' : 'embedded defaults'}${process.env.BENCH_BROKER_URL ? ', RabbitMQ STOMP' : ''})`,
    );
    const engine = await startBenchEngine({
      dataDir,
      // The server path: a PostgreSQL server (an empty database) and RabbitMQ over STOMP.
      databaseUrl: process.env.BENCH_DATABASE_URL,
      brokerUrl: process.env.BENCH_BROKER_URL,
      timeStatements,
      settings: loadSettings({}, { fileshare_roots: [exportDir] }),
    });
    try {
      const run = await runTimed(engine, pipelineYaml(exportDir));
      const peakRss = process.resourceUsage().maxRSS / 1024;
      const stages = await sql<{
        stage: string;
        messages: number;
        handler_s: number;
        span_s: number;
        failed: number;
      }>`
        select stage, count(*)::int as messages,
               round((sum(duration_ms) / 1000.0)::numeric, 2)::float as handler_s,
               round(extract(epoch from max(finished_at) - min(started_at))::numeric, 2)::float as span_s,
               count(*) filter (where status = 'failed')::int as failed
        from lineage where execution_id = ${run.executionId}
        group by stage order by min(started_at)`.execute(engine.database.db);
      console.log({
        outcome: run.outcome,
        seconds: round(run.seconds),
        conversations_per_second: Math.round(fixture.length / run.seconds),
        peak_rss_mb: Math.round(peakRss),
        cpu_cores: round(run.cpu / run.seconds),
      });
      console.table(stages.rows);
      await printStatementTimes(engine.database);
      const failed = stages.rows.reduce((sum, row) => sum + row.failed, 0);
      check(run.outcome === 'execution.completed', `the pipeline ended ${run.outcome}`);
      check(failed === 0, `${failed} pipeline messages failed`);
      const peakMb = Math.round(peakRss);
      console.log(
        `peak RSS ${peakMb} MB (target under 2048: ${target(peakMb < 2048, `peak RSS ${peakMb} MB < 2048`)})`,
      );
      // Issue 19's target (3 minutes embedded) and issue 36's (2 minutes on the server path) are
      // for 50,000 conversations; a shorter run says nothing about them.
      const targetSeconds = process.env.BENCH_DATABASE_URL ? 120 : 180;
      console.log(
        count >= 50_000
          ? `pipeline ${round(run.seconds)} s (target under ${targetSeconds} s: ${target(run.seconds < targetSeconds, `pipeline ${round(run.seconds)} s < ${targetSeconds} s`)})`
          : `pipeline ${round(run.seconds)} s (the ${targetSeconds} s target applies at --count 50000)`,
      );
    } finally {
      await engine.vectorIndexes.whenIdle();
      await engine.orchestrator.stop();
      await engine.database.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

function pipelineYaml(root: string): string {
  return `
init_message: { route: packages, payload: {} }
routes:
  - id: packages
    adapters:
      - type: conv_enumerator
        config: { root: "${root}" }
      - type: conv_batch_processor
        config: { batch_size: 500 }
      - type: conv_compact
      - type: pii_redactor
        config: { fields: ["conversations[].text", "conversations[].turns[].text", "conversations[].title"] }
      - type: conv_storage_writer
      - type: conv_stored_keys_fanout
        destination: conversations
  - id: conversations
    adapters:
      - type: conv_filter
        concurrency: 32
      - type: conv_norwegian_filter
        concurrency: 32
      - type: conv_filtered_collector
        concurrency: 64
      - type: conv_deduplicate
      - type: conv_deduplicate_writer
      - type: conv_clustering
      - type: conv_clustering_writer
      - type: conv_catalog
      - type: conv_catalog_writer
      - type: conv_routine_discovery
      - type: conv_routine_indexer
      - type: conv_routine_renderer
        destination: routines
  - id: routines
    adapters:
      - type: conv_routine_writer
      - type: smart_segmenter
      - type: segment_publisher
        destination: embed
  - id: embed
    adapters:
      - type: embedding_generator
`;
}

/** The turns' texts without the role prefixes (what a language detector should read). */
function plainText(conversation: CompactConversation): string {
  return conversation.turns.map((turn) => turn.text).join('\n');
}

function majority(labels: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const label of labels) counts.set(label, (counts.get(label) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '';
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
