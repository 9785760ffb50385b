/**
 * `npm run bench:knowledge`: knowledge consolidation over the PostgreSQL documentation on the
 * embedded defaults (PGlite, in-process broker, filesystem store), offline and with a model.
 *
 * 1. The HTML pages are stored by a real ingestion (fileshare_enumerator -> fileshare_fetcher).
 * 2. A full run, offline (extractive pages) and with the local OpenAI-compatible server (pages
 *    written from the prompt's passages, so every call is counted), both publishing to a
 *    loopback HTTP knowledge base.
 * 3. 10 stored pages are changed and 2 removed; both run again: concepts re-written, model
 *    calls, pages published again, diffs, and whether a removed page is still cited.
 * 4. Concept quality against the documentation's own book index (bookindex.html, written by
 *    its editors): how many concepts are index terms, how many of a matched concept's sources
 *    the index lists for that term, and how many frequent index terms were found.
 *
 *   npm run bench:knowledge                        # the whole corpus
 *   BENCH_PAGES=200 npm run bench:knowledge        # the first 200 pages
 *
 * Exit 1 when a run does not complete or has a failed message, a full run publishes no page, an
 * untouched concept is sent to the model again, or a published page still cites a removed
 * source. BENCH_BREAK=failed-model: the model server answers 500, so the model runs fail.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ConceptMap } from '../src/consolidation/concept-map.js';
import { normalisedName } from '../src/consolidation/concept-names.js';
import { loadSettings } from '../src/settings.js';
import {
  type HttpKnowledgeBaseDouble,
  KBASE_TOKEN,
  startHttpKnowledgeBase,
} from '../test/helpers/kbase-doubles.js';
import { conceptPageAnswer, startLlmServer } from '../test/helpers/llm-server.js';
import { benchBreak, check, finish } from './lib/checks.js';
import { type BenchEngine, runStoredTimed, runTimed, startBenchEngine } from './lib/ingest-corpus.js';

const corpus = process.env.BENCH_CORPUS ?? '/usr/share/doc/postgresql-doc-15/html';
const pageLimit = Number(process.env.BENCH_PAGES ?? 0) || undefined;
/** BENCH_BREAK=failed-model: every model call answers 500, so batch_synthesizer fails in the model runs. */
const failModel = benchBreak('failed-model');

const ingestYaml = (root: string, names: string[] | undefined) => `
init_message: { route: list, payload: { root: "${root}" } }
routes:
  - id: list
    adapters:
      - type: fileshare_enumerator
        config: { extensions: [.html] }
        destination: fetch
  - id: fetch
    adapters:
      - type: fileshare_fetcher
        concurrency: 8
${names ? `# first ${names.length} pages` : ''}
`;

const knowledgeYaml = (name: string, kbaseUrl: string, llm: boolean) => `
init_message: { route: map, payload: {} }
routes:
  - id: map
    adapters:
      - type: storage_enumerator
        config: { stage: fileshare_fetcher, extensions: [.html], emit: manifest }
      - type: knowledge_diff
        config: { knowledge_base: ${name} }
      - type: concept_detection
      - type: concept_map_updater
      - type: concept_map_writer
      - type: concept_fanout
        destination: pages
  - id: pages
    adapters:
      - type: concept_source_loader
        concurrency: 4
      - type: batch_synthesizer
        ${llm ? 'config: { llm_profile: model, concepts_per_call: 4 }' : ''}
        batch: { size: 16, max_wait_ms: 50 }
      - type: structural_validator
        concurrency: 4
      - type: concept_link_resolver
      - type: scribe_diff_writer
        concurrency: 4
      - type: kbase_writer
        concurrency: 4
        config: { target: { kind: http, url: "${kbaseUrl}", token_secret: kbase } }
`;

async function main() {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'weir-bench-knowledge-'));
  let root = corpus;
  let names: string[] | undefined;
  if (pageLimit) {
    // A directory with copies of the first N pages (the share lists a directory, without links).
    const { copyFile, mkdir } = await import('node:fs/promises');
    names = (await readdir(corpus))
      .filter((name) => name.endsWith('.html'))
      .sort()
      .slice(0, pageLimit);
    root = path.join(dataDir, 'corpus');
    await mkdir(root);
    for (const name of names) await copyFile(path.join(corpus, name), path.join(root, name));
  }
  const llm = await startLlmServer();
  llm.respond = conceptPageAnswer;
  if (failModel) llm.behaviour = 'http-500';
  const offlineBase = await startHttpKnowledgeBase();
  const modelBase = await startHttpKnowledgeBase();
  const settings = loadSettings({}, {
    fileshare_roots: [root, corpus],
    fetch_allowed_cidrs: ['127.0.0.0/8'],
    secrets: { kbase: KBASE_TOKEN },
    secret_origins: { kbase: [new URL(offlineBase.url).origin, new URL(modelBase.url).origin] },
    llm_profiles: [
      { name: 'model', provider: 'openai', base_url: llm.baseUrl, model: 'bench', timeout_ms: 30_000 },
    ],
  } as never);
  const engine = await startBenchEngine({ dataDir, settings });
  try {
    const ingest = await runTimed(engine, ingestYaml(root, names));
    console.log(
      `ingest: ${ingest.outcome}, ${ingest.statistics.total_messages} messages, ${ingest.seconds.toFixed(1)} s`,
    );
    check(
      ingest.outcome === 'execution.completed' && ingest.statistics.failed_messages === 0,
      `the corpus ingestion ended ${ingest.outcome} with ${ingest.statistics.failed_messages} failed messages`,
    );

    const offlineConfig = await engine.configs.create({
      config_yaml: knowledgeYaml('offline', offlineBase.url, false),
    });
    const modelConfig = await engine.configs.create({
      config_yaml: knowledgeYaml('model', modelBase.url, true),
    });
    const offline1 = await runConfig(engine, offlineConfig.id);
    const offlineMap1 = await mapOf(engine, offline1.executionId);
    const offlineRejected1 = await rejectedOf(engine, offline1.executionId);
    report('offline, full run', offline1, offlineMap1, offlineBase, offlineRejected1);
    check(offlineBase.pages.size > 0, 'the offline full run published no page');

    const calls0 = llm.requests.length;
    const model1 = await runConfig(engine, modelConfig.id);
    const modelMap1 = await mapOf(engine, model1.executionId);
    const modelCalls1 = llm.requests.length - calls0;
    report('model, full run', model1, modelMap1, modelBase, await rejectedOf(engine, model1.executionId));
    console.log(`  model calls: ${modelCalls1} for ${modelMap1.stale.length} concepts (4 per call)`);
    check(modelBase.pages.size > 0, 'the model full run published no page');

    // Change 10 stored pages that concepts rest on, remove 2.
    const used = [
      ...new Set(
        Object.values(offlineMap1.concepts).flatMap((concept) => concept.sources.map((s) => s.source_id)),
      ),
    ].sort();
    const changed = used
      .filter((_, index) => index % Math.max(1, Math.floor(used.length / 12)) === 0)
      .slice(0, 12);
    const toRemove = changed.splice(10, 2);
    for (const id of changed) {
      const source = offlineMap1.sources[id];
      if (!source) continue;
      const body = (await engine.storage.get(source.key)).toString('utf8');
      const info = await engine.storage.stat(source.key);
      await engine.storage.put(
        source.key,
        body.replace(
          '</body>',
          '<p>This page was revised for the benchmark: the revision adds one paragraph.</p></body>',
        ),
        { contentType: info?.content_type ?? 'text/html', metadata: info?.metadata ?? {} },
      );
    }
    for (const id of toRemove) await engine.storage.delete(offlineMap1.sources[id]?.key as string);

    const putsBefore = offlineBase.requests.filter((request) => request.method === 'PUT').length;
    const offline2 = await runConfig(engine, offlineConfig.id);
    const offlineMap2 = await mapOf(engine, offline2.executionId);
    report(
      'offline, after 10 changed and 2 removed',
      offline2,
      offlineMap2,
      offlineBase,
      await rejectedOf(engine, offline2.executionId),
    );
    const offlinePuts2 =
      offlineBase.requests.filter((request) => request.method === 'PUT').length - putsBefore;
    const diffs = await engine.storage.list({
      prefix: `${offline2.executionId}/scribe_diff_writer/diffs/`,
      limit: 10_000,
    });
    console.log(`  pages published again: ${offlinePuts2}, diffs stored: ${diffs.objects.length}`);

    const calls1 = llm.requests.length;
    const model2 = await runConfig(engine, modelConfig.id);
    const modelMap2 = await mapOf(engine, model2.executionId);
    const sent = llm.requests
      .slice(calls1)
      .flatMap((request) =>
        [...(request.body.messages[1]?.content ?? '').matchAll(/slug=([a-z0-9-]+)/g)].map(
          (m) => m[1] as string,
        ),
      );
    const untouchedSent = sent.filter((slug) => !modelMap2.stale.includes(slug));
    report(
      'model, after 10 changed and 2 removed',
      model2,
      modelMap2,
      modelBase,
      await rejectedOf(engine, model2.executionId),
    );
    console.log(
      `  model calls: ${llm.requests.length - calls1} for ${modelMap2.stale.length} stale concepts; concepts sent that were untouched: ${untouchedSent.length}`,
    );
    check(untouchedSent.length === 0, `${untouchedSent.length} untouched concepts sent to the model again`);
    for (const [label, base] of [
      ['offline', offlineBase],
      ['model', modelBase],
    ] as const) {
      const citing = [...base.pages.values()].filter((page) =>
        page.sources.some((source) => toRemove.includes(source.source_id)),
      );
      console.log(`  ${label}: published pages still citing a removed source: ${citing.length}`);
      check(citing.length === 0, `${label}: ${citing.length} pages still cite a removed source`);
    }

    await bookIndexQuality(offlineMap1, names);
  } finally {
    await engine.orchestrator.stop();
    await engine.database.close();
    await offlineBase.close();
    await modelBase.close();
    await llm.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function runConfig(engine: BenchEngine, configId: string) {
  const run = await runStoredTimed(engine, configId);
  check(run.outcome === 'execution.completed', `run ${run.executionId} ended ${run.outcome}`);
  check(
    run.statistics.failed_messages === 0,
    `run ${run.executionId}: ${run.statistics.failed_messages} messages failed`,
  );
  return run;
}

async function mapOf(engine: BenchEngine, executionId: string): Promise<ConceptMap> {
  const listing = await engine.storage.list({ prefix: `${executionId}/concept_map_updater/` });
  const key = listing.objects.find((object) => object.key.endsWith('concept-map.json'))?.key;
  if (!key) throw new Error(`run ${executionId} wrote no concept map`);
  return JSON.parse((await engine.storage.get(key)).toString('utf8')) as ConceptMap;
}

async function rejectedOf(engine: BenchEngine, executionId: string): Promise<Record<string, number>> {
  const listing = await engine.storage.list({
    prefix: `${executionId}/structural_validator/rejected/`,
    limit: 10_000,
  });
  const codes: Record<string, number> = {};
  for (const object of listing.objects.filter((o) => o.key.endsWith('.findings.json'))) {
    const { findings } = JSON.parse((await engine.storage.get(object.key)).toString('utf8')) as {
      findings: { code: string; severity: string }[];
    };
    for (const code of new Set(findings.filter((f) => f.severity === 'error').map((f) => f.code)))
      codes[code] = (codes[code] ?? 0) + 1;
  }
  return codes;
}

function report(
  label: string,
  run: { outcome: string; seconds: number; cpu: number },
  map: ConceptMap,
  base: HttpKnowledgeBaseDouble,
  rejected: Record<string, number>,
) {
  const rejectedCount = Object.values(rejected).reduce((sum, count) => Math.max(sum, count), 0);
  console.log(
    `${label}: ${run.outcome} in ${run.seconds.toFixed(1)} s (${run.cpu.toFixed(1)} CPU s); map v${map.version}: ` +
      `${Object.keys(map.sources).length} sources, ${Object.keys(map.concepts).length} concepts, ${map.stale.length} stale, ` +
      `${map.removed.length} removed; knowledge base holds ${base.pages.size} pages; rejected by code ${JSON.stringify(rejected)} (at least ${rejectedCount})`,
  );
}

/** Concepts against the book index: precision of names and of sources, recall of frequent terms. */
async function bookIndexQuality(map: ConceptMap, names: string[] | undefined) {
  const html = await readFile(path.join(corpus, 'bookindex.html'), 'utf8').catch(() => undefined);
  if (!html) return console.log('no bookindex.html: index quality not measured');
  const pagesOf = new Map<string, Set<string>>();
  // Top-level entries: <dt id="ientry-...">term[, <a href="page">]...</dt> then an optional <dd> of sub-entries.
  const entry = /<dt id="ientry-[^"]*">([\s\S]*?)<\/dt>(\s*<dd>([\s\S]*?)<\/dd>)?/g;
  for (const match of html.matchAll(entry)) {
    const term = (match[1] as string)
      .replace(/<a [\s\S]*$/, '')
      .replace(/<[^>]+>/g, '')
      .replace(/,\s*$/, '')
      .trim();
    const key = normalisedName(term.replace(/\s+\(.*\)$/, ''));
    if (!key) continue;
    const pages = pagesOf.get(key) ?? new Set<string>();
    for (const link of `${match[1]} ${match[3] ?? ''}`.matchAll(/href="([^"#]+)/g))
      pages.add(link[1] as string);
    pagesOf.set(key, pages);
  }
  const inCorpus = (page: string) => !names || names.includes(page);
  const concepts = Object.values(map.concepts);
  const matched = concepts.filter((concept) =>
    [concept.name, ...concept.aliases].some((name) => pagesOf.has(normalisedName(name))),
  );
  let sourceHits = 0;
  let sourceTotal = 0;
  for (const concept of matched) {
    const pages = new Set<string>();
    for (const name of [concept.name, ...concept.aliases])
      for (const page of pagesOf.get(normalisedName(name)) ?? []) pages.add(page);
    for (const source of concept.sources) {
      sourceTotal++;
      if (pages.has(path.basename(source.source_id))) sourceHits++;
    }
  }
  const frequent = [...pagesOf.entries()].filter(([, pages]) => [...pages].filter(inCorpus).length >= 5);
  const conceptKeys = new Set(
    concepts.flatMap((concept) => [concept.name, ...concept.aliases].map(normalisedName)),
  );
  const found = frequent.filter(([key]) => conceptKeys.has(key));
  console.log(
    `book index: ${pagesOf.size} terms; concepts that are index terms ${matched.length}/${concepts.length} ` +
      `(${((matched.length / Math.max(1, concepts.length)) * 100).toFixed(1)}%); their sources the index lists for the term ` +
      `${sourceHits}/${sourceTotal} (${((sourceHits / Math.max(1, sourceTotal)) * 100).toFixed(1)}%); index terms with 5+ pages found ` +
      `${found.length}/${frequent.length} (${((found.length / Math.max(1, frequent.length)) * 100).toFixed(1)}%)`,
  );
}

await main();
finish();
