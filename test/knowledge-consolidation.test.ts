/**
 * Knowledge consolidation end to end through the engine: stored sources ->
 * storage_enumerator (manifest) -> knowledge_diff -> concept_detection ->
 * concept_map_updater -> concept_map_writer -> concept_fanout -> concept_source_loader ->
 * batch_synthesizer -> structural_validator -> concept_link_resolver -> scribe_diff_writer ->
 * kbase_writer, publishing
 * to a loopback HTTP knowledge base. The model path runs against the local OpenAI-compatible
 * server, which writes pages from the passages in its prompt; a second run after changing
 * and removing sources re-writes only the affected concepts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConceptMap } from '../src/consolidation/concept-map.js';
import { databaseTargets } from './helpers/databases.js';
import { createTestEngine, runToStatus, type TestEngine } from './helpers/engine.js';
import {
  type HttpKnowledgeBaseDouble,
  KBASE_TOKEN,
  startHttpKnowledgeBase,
} from './helpers/kbase-doubles.js';
import { conceptPageAnswer, type LlmServer, startLlmServer } from './helpers/llm-server.js';
import { LOOPBACK_FETCH } from './helpers/test-site.js';

/** Each page covers a few topics; a topic's sentences name it, so topics shared by pages become concepts. */
const topics: Record<string, string[]> = {
  autovacuum: [
    'Autovacuum is a background process that runs VACUUM and ANALYZE automatically.',
    'The autovacuum launcher starts workers for tables with enough dead tuples.',
  ],
  'write-ahead log': [
    'The write-ahead log records every change before the data files are written.',
    'Replaying the write-ahead log after a crash brings the data files back to a consistent state.',
  ],
  'replication slot': [
    'A replication slot keeps the write-ahead log segments a standby still needs.',
    'An unused replication slot can fill the disk, so drop slots that no standby reads.',
  ],
  checkpoint: [
    'A checkpoint flushes dirty buffers to disk and marks a point in the log.',
    'Frequent checkpoint activity raises the volume of full-page writes.',
  ],
  'visibility map': [
    'The visibility map tracks pages whose tuples are visible to every transaction.',
    'Index-only scans read the visibility map to skip heap fetches.',
  ],
  'connection pooler': [
    'A connection pooler keeps server connections open and hands them to clients.',
    'Use a connection pooler when thousands of clients connect for short transactions.',
  ],
};

const pageTopics: Record<string, string[]> = {
  'maintenance.md': ['autovacuum', 'visibility map', 'checkpoint'],
  'vacuum-tuning.md': ['autovacuum', 'visibility map'],
  'wal-internals.md': ['write-ahead log', 'checkpoint', 'replication slot'],
  'crash-recovery.md': ['write-ahead log', 'checkpoint'],
  'standby-setup.md': ['replication slot', 'write-ahead log'],
  'disk-usage.md': ['replication slot', 'autovacuum'],
  'index-only-scans.md': ['visibility map'],
  'scaling-clients.md': ['connection pooler'],
  'operations-faq.md': ['connection pooler', 'checkpoint'],
};

function pageText(name: string, edition = 1): string {
  const title = name.replace('.md', '').replace(/-/g, ' ');
  const lines = [`# ${title[0]?.toUpperCase()}${title.slice(1)}`, ''];
  for (const topic of pageTopics[name] ?? []) {
    lines.push(`## About the ${topic}`, '', ...(topics[topic] ?? []).map((sentence) => sentence), '');
    if (edition > 1) lines.push(`Edition ${edition}: the ${topic} settings were reviewed this quarter.`, '');
  }
  return lines.join('\n');
}

const sourcePrefix = '00000000-0000-7000-8000-00000000aaaa/fileshare_fetcher/';
const publicUrl = 'https://weir.example.test/weir';

async function storeSource(engine: TestEngine, name: string, edition = 1) {
  await engine.storage.put(`${sourcePrefix}${name}`, pageText(name, edition), {
    contentType: 'text/markdown',
    metadata: {
      url: `file:///docs/${name}`,
      stage: 'fileshare_fetcher',
      execution_id: sourcePrefix.slice(0, 36),
    },
  });
}

const pipeline = (kbaseUrl: string, llm: boolean) => `
init_message:
  route: list
  payload: {}
routes:
  - id: list
    adapters:
      - type: storage_enumerator
        config: { prefix: "${sourcePrefix}", emit: manifest }
      - type: knowledge_diff
        config: { knowledge_base: ops }
      - type: concept_detection
      - type: concept_map_updater
        config: { min_sources: 2 }
      - type: concept_map_writer
      - type: concept_fanout
        destination: pages
  - id: pages
    adapters:
      - type: concept_source_loader
      - type: batch_synthesizer
        ${llm ? 'config: { llm_profile: model, concepts_per_call: 2 }' : ''}
        batch: { size: 8, max_wait_ms: 50 }
      - type: structural_validator
        config: { min_words: 10 }
      - type: concept_link_resolver
      - type: scribe_diff_writer
      - type: kbase_writer
        config:
          target: { kind: http, url: "${kbaseUrl}", token_secret: kbase }
`;

describe.each(databaseTargets())('knowledge consolidation ($name)', (target) => {
  let engine: TestEngine;
  let kbase: HttpKnowledgeBaseDouble;
  let offlineBase: HttpKnowledgeBaseDouble;
  let linkedBase: HttpKnowledgeBaseDouble;
  let llm: LlmServer;

  beforeAll(async () => {
    kbase = await startHttpKnowledgeBase();
    offlineBase = await startHttpKnowledgeBase();
    linkedBase = await startHttpKnowledgeBase();
    llm = await startLlmServer();
    llm.respond = conceptPageAnswer;
    engine = await createTestEngine(target, {
      settings: {
        ...LOOPBACK_FETCH,
        secrets: { kbase: KBASE_TOKEN },
        // Where the knowledge base's readers reach Weir: stored sources are linked under it.
        public_url: publicUrl,
        // The token goes to the two knowledge bases' origins only.
        secret_origins: {
          kbase: [kbase.url, offlineBase.url, linkedBase.url].map((url) => new URL(url).origin),
        },
        llm_profiles: [
          {
            name: 'model',
            provider: 'openai',
            base_url: llm.baseUrl,
            model: 'test-model',
            timeout_ms: 10_000,
          },
        ],
      } as never,
    });
    for (const name of Object.keys(pageTopics)) await storeSource(engine, name);
  });

  afterAll(async () => {
    await engine?.close();
    await kbase?.close();
    await offlineBase?.close();
    await linkedBase?.close();
    await llm?.close();
  });

  async function latestMap(executionId: string): Promise<ConceptMap> {
    const listing = await engine.storage.list({ prefix: `${executionId}/concept_map_updater/` });
    const key = listing.objects.find((object) => object.key.endsWith('concept-map.json'))?.key as string;
    return JSON.parse((await engine.storage.get(key)).toString('utf8')) as ConceptMap;
  }

  /**
   * Issue 31: the sources are files (`file:///docs/...`), which the knowledge base's readers
   * cannot open. Each published source links to its stored object under the public URL, and
   * so do the page's Sources links. Issue 33: the file origin is a server path, never
   * published: `url` is that http link too.
   */
  async function expectOpenableSources(base: HttpKnowledgeBaseDouble) {
    const objects = `${publicUrl}/api/v1/storage/objects/`;
    expect(base.pages.size).toBeGreaterThan(0);
    for (const page of base.pages.values()) {
      for (const source of page.sources) {
        expect(source.link?.startsWith(objects), JSON.stringify(source)).toBe(true);
        expect(source.url).toBe(source.link);
        const key = decodeURIComponent((source.link as string).slice(objects.length));
        expect((await engine.storage.stat(key))?.metadata.url).toMatch(/^file:\/\/\/docs\//);
      }
      const sourcesSection = page.markdown.slice(page.markdown.indexOf('## Sources'));
      const links = [...sourcesSection.matchAll(/\]\(([^)]+)\)/g)].map((match) => match[1]);
      expect(links.length).toBeGreaterThan(0);
      for (const link of links) expect(link?.startsWith(objects), link).toBe(true);
      expect(page.markdown).not.toContain('file://');
    }
  }

  it('compiles cited pages from the sources, then re-writes only what changed', async () => {
    const config = await engine.configs.create({ config_yaml: pipeline(kbase.url, true) });
    const first = await runToStatus(engine, config.id, 'completed');
    const firstExecution = first[0]?.execution_id as string;
    const map1 = await latestMap(firstExecution);
    const concepts1 = Object.keys(map1.concepts);
    expect(concepts1).toEqual(
      expect.arrayContaining([
        'autovacuum',
        'write-ahead-log',
        'replication-slot',
        'checkpoint',
        'visibility-map',
      ]),
    );
    expect(map1.stale.sort()).toEqual([...concepts1].sort());
    // Every concept published, each page citing passages that resolve, from two or more sources.
    expect([...kbase.pages.keys()].sort()).toEqual([...concepts1].sort());
    for (const page of kbase.pages.values()) {
      expect(page.markdown).toMatch(/\[1\]/);
      expect(page.markdown).toContain('## Sources');
      expect(new Set(page.sources.map((source) => source.source_id)).size).toBeGreaterThanOrEqual(2);
    }
    await expectOpenableSources(kbase);
    // Each concept went to the model once, two to a call at most.
    const callsFirst = llm.requests.length;
    const slugsOf = (requests: LlmServer['requests']) =>
      requests.flatMap((request) =>
        [...(request.body.messages[1]?.content ?? '').matchAll(/slug=([a-z0-9-]+)/g)].map(
          (match) => match[1],
        ),
      );
    expect(slugsOf(llm.requests).sort()).toEqual([...concepts1].sort());
    expect(callsFirst).toBeGreaterThanOrEqual(Math.ceil(concepts1.length / 2));

    // Change a source that only the connection pooler concept uses, remove one the visibility map uses.
    await storeSource(engine, 'scaling-clients.md', 2);
    const removedKey = `${sourcePrefix}index-only-scans.md`;
    await engine.storage.delete(removedKey);
    const putsBefore = kbase.requests.filter((request) => request.method === 'PUT').length;
    const second = await runToStatus(engine, config.id, 'completed');
    const map2 = await latestMap(second[0]?.execution_id as string);
    expect(map2.version).toBe(2);
    expect(map2.stale.sort()).toEqual(['connection-pooler', 'visibility-map']);

    // Only the stale concepts went to the model, and only their pages were written again.
    expect(slugsOf(llm.requests.slice(callsFirst)).sort()).toEqual(['connection-pooler', 'visibility-map']);
    const puts = kbase.requests.filter((request) => request.method === 'PUT').slice(putsBefore);
    expect(puts.map((request) => request.path).sort()).toEqual([
      '/pages/connection-pooler',
      '/pages/visibility-map',
    ]);

    // The removed source is gone from every citation; diffs were stored for review.
    for (const page of kbase.pages.values()) {
      expect(page.sources.map((source) => source.source_id)).not.toContain(
        'file:///docs/index-only-scans.md',
      );
      expect(page.markdown).not.toContain('index-only-scans');
    }
    const diffs = await engine.storage.list({
      prefix: `${second[0]?.execution_id}/scribe_diff_writer/diffs/`,
    });
    expect(diffs.objects.map((object) => object.key.split('/').pop()).sort()).toEqual([
      'connection-pooler.diff',
      'visibility-map.diff',
    ]);
    const diff = (await engine.storage.get(diffs.objects[0]?.key as string)).toString('utf8');
    expect(diff).toMatch(/^--- a\//m);
    expect(diff).toMatch(/^[-+][^-+]/m);

    // A third run with nothing changed writes nothing and asks the model nothing.
    const callsBefore = llm.requests.length;
    const requestsBefore = kbase.requests.length;
    const third = await runToStatus(engine, config.id, 'completed');
    const map3 = await latestMap(third[0]?.execution_id as string);
    expect(map3.stale).toEqual([]);
    expect(llm.requests.length).toBe(callsBefore);
    expect(kbase.requests.length).toBe(requestsBefore);
  });

  it('writes extractive pages offline, every one passing the validator', async () => {
    await engine.storage.put(`${sourcePrefix}index-only-scans.md`, pageText('index-only-scans.md'), {
      contentType: 'text/markdown',
      metadata: { url: 'file:///docs/index-only-scans.md', stage: 'fileshare_fetcher' },
    });
    const yaml = pipeline(offlineBase.url, false).replace('knowledge_base: ops', 'knowledge_base: offline');
    const config = await engine.configs.create({ config_yaml: yaml });
    const lineage = await runToStatus(engine, config.id, 'completed');
    const map = await latestMap(lineage[0]?.execution_id as string);
    const rejected = await engine.storage.list({
      prefix: `${lineage[0]?.execution_id}/structural_validator/rejected/`,
    });
    const findings = await Promise.all(
      rejected.objects.map(async (object) => (await engine.storage.get(object.key)).toString('utf8')),
    );
    expect(findings).toEqual([]);
    expect([...offlineBase.pages.keys()].sort()).toEqual(Object.keys(map.concepts).sort());
    const page = offlineBase.pages.get('replication-slot');
    // Extractive: sentences of the sources, quoted, each with its citation.
    expect(page?.markdown).toContain(
      'A replication slot keeps the write-ahead log segments a standby still needs. [',
    );
    expect(page?.markdown).toMatch(/\[\d+\]/);
    await expectOpenableSources(offlineBase);

    // A changed source whose concepts' new pages fail validation: the old pages come down,
    // so nothing stays published from what no longer holds.
    await storeSource(engine, 'standby-setup.md', 3);
    await engine.configs.update(config.id, {
      config_yaml: yaml.replace('min_words: 10', 'min_words: 5000'),
    });
    const again = await runToStatus(engine, config.id, 'completed');
    const map2 = await latestMap(again[0]?.execution_id as string);
    expect(map2.stale).toContain('replication-slot');
    for (const slug of map2.stale) expect(offlineBase.pages.has(slug)).toBe(false);
    expect(
      offlineBase.requests.filter((request) => request.method === 'DELETE').map((request) => request.path),
    ).toContain('/pages/replication-slot');
    expect(offlineBase.pages.size).toBe(Object.keys(map.concepts).length - map2.stale.length);
  });

  it('links "Related concepts" only to pages that exist: a concept whose page was rejected is no link', async () => {
    const base = linkedBase;
    // Three cited sources needed: the connection pooler rests on two, so its page is rejected
    // (K105); the checkpoint shares operations-faq.md with it and would link to it.
    const yaml = pipeline(base.url, false)
      .replace('knowledge_base: ops', 'knowledge_base: linked')
      .replace('config: { min_words: 10 }', 'config: { min_words: 10, min_sources: 3 }');
    const config = await engine.configs.create({ config_yaml: yaml });
    const lineage = await runToStatus(engine, config.id, 'completed');
    const map = await latestMap(lineage[0]?.execution_id as string);
    expect(map.concepts.checkpoint?.related).toContain('connection-pooler');
    expect(base.pages.has('connection-pooler')).toBe(false);
    expect(base.pages.size).toBeGreaterThan(0);
    for (const [slug, page] of base.pages) {
      const related = page.markdown.includes('## Related concepts')
        ? page.markdown.slice(
            page.markdown.indexOf('## Related concepts'),
            page.markdown.indexOf('## Sources'),
          )
        : '';
      const links = [...related.matchAll(/\]\(([a-z0-9-]+)\.md\)/g)].map((match) => match[1] as string);
      for (const link of links) expect(base.pages.has(link), `${slug} links ${link}`).toBe(true);
    }
    const checkpoint = base.pages.get('checkpoint');
    expect(checkpoint?.markdown).not.toContain('connection-pooler.md');
  });
});
