/**
 * The Markdown and Embedding chain through the real engine, on each database: stored HTML
 * pages -> storage_retriever -> html_to_markdown -> markdown_storage_writer -> smart_segmenter
 * (reading the stored markdown) -> segment_publisher -> embedding_generator (batched), and a
 * second pipeline ending in segment_storage. A transparent `tap` step after each stage
 * records the payloads of spec 2.2 as they travel.
 */
import { sql } from 'kysely';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAdapter } from '../src/adapters/adapter.js';
import { builtinAdapters } from '../src/adapters/builtin.js';
import { createAdapterRegistry } from '../src/adapters/registry.js';
import { engineCombinations } from './helpers/brokers.js';
import { createTestEngine, type TestEngine, waitForStatus } from './helpers/engine.js';

interface Tapped {
  stage: string;
  execution: string;
  payload: Record<string, unknown>;
  metadata: Record<string, unknown>;
}
const tapped: Tapped[] = [];
const tap = defineAdapter({
  type: 'tap',
  group: 'synthetic',
  summary: 'records each payload and passes it on unchanged',
  config: Type.Object({ label: Type.String() }),
  input: Type.Object({}),
  output: Type.Object({}),
  create: (config) => async (payload, context) => {
    tapped.push({
      stage: config.label,
      execution: context.executionId,
      payload,
      metadata: { ...context.metadata },
    });
    return [{ payload }];
  },
});

const vacuumPage = `<!doctype html><html lang="en"><head><title>VACUUM | Example Docs</title>
<meta name="description" content="Garbage-collect and optionally analyze a database">
<link rel="canonical" href="https://docs.example.org/sql-vacuum.html"></head>
<body><div class="navheader"><a href="index.html">Home</a> <a href="next.html">Next</a></div>
<nav><ul><li><a href="/">Docs</a></li></ul></nav>
<main><h1>VACUUM</h1><p>VACUUM reclaims storage occupied by dead tuples. In normal operation, tuples that are deleted or obsoleted by an update are not physically removed from their table; they remain present until a VACUUM is done.</p>
<h2>Synopsis</h2><pre><code class="language-sql">VACUUM [ ( option [, ...] ) ] [ table_and_columns [, ...] ]
VACUUM [ FULL ] [ FREEZE ] [ VERBOSE ] [ ANALYZE ] [ table_and_columns [, ...] ]</code></pre>
<h2>Parameters</h2><table><tr><th>Option</th><th>Meaning</th></tr><tr><td>FULL</td><td>Selects full vacuum, which can reclaim more space, but takes much longer and exclusively locks the table.</td></tr>
<tr><td>FREEZE</td><td>Selects aggressive freezing of tuples.</td></tr><tr><td>VERBOSE</td><td>Prints a detailed vacuum activity report for each table.</td></tr></table>
<h2>Notes</h2>${Array.from({ length: 12 }, (_, index) => `<p>Note ${index}: vacuuming a table regularly keeps its statistics and visibility map current, which lets the planner choose good plans and index-only scans skip heap fetches.</p>`).join('')}
</main><footer>Copyright the example group</footer></body></html>`;

const norwegianPage = `<html lang="nb"><head><title>Om støvsuging av tabeller</title></head><body>
<header class="site-header"><a href="/">Forside</a></header>
<article><h1>Støvsuging</h1><p>Når du sletter rader i en tabell, blir de ikke fjernet med en gang. Det er derfor vi kjører VACUUM jevnlig, og det er også lurt å oppdatere statistikken.</p>
<h2>Vanlige spørsmål</h2><ul><li>Hvor ofte skal jeg kjøre det?</li><li>Hva gjør FULL?</li></ul></article></body></html>`;

const ingestYaml = `
name: markdown-chain
routes:
  - id: ingest
    adapters:
      - type: storage_retriever
      - { type: tap, name: tap_retrieved, config: { label: storage_retriever } }
      - type: html_to_markdown
      - { type: tap, name: tap_markdown, config: { label: html_to_markdown } }
      - type: markdown_storage_writer
        config: { segmenter: { max_tokens: 120, overlap_tokens: 20, min_tokens: 10 } }
      - { type: tap, name: tap_written, config: { label: markdown_storage_writer } }
      - type: smart_segmenter
        config: { max_tokens: 120, overlap_tokens: 20, min_tokens: 10 }
      - { type: tap, name: tap_segmented, config: { label: smart_segmenter } }
      - type: segment_publisher
        destination: embed
  - id: embed
    adapters:
      - { type: tap, name: tap_published, config: { label: segment_publisher } }
      - type: embedding_generator
        batch: { size: 4, max_wait_ms: 50 }
        concurrency: 2
      - { type: tap, name: tap_embedded, config: { label: embedding_generator } }
`;

const segmentStorageYaml = `
name: segments-only
routes:
  - id: ingest
    adapters:
      - type: storage_retriever
      - type: html_to_markdown
      - type: smart_segmenter
        config: { max_tokens: 200 }
      - type: segment_storage
      - { type: tap, name: tap_stored, config: { label: segment_storage } }
`;

for (const { name, database: target, broker: brokerTarget } of await engineCombinations()) {
  describe(`markdown and embedding chain (${name})`, () => {
    let engine: TestEngine;
    beforeAll(async () => {
      engine = await createTestEngine(target, {
        registry: createAdapterRegistry([...builtinAdapters, tap]),
        broker: await brokerTarget.open(),
      });
      await engine.storage.put('fixtures/web/vacuum.html', vacuumPage, {
        contentType: 'text/html; charset=utf-8',
        metadata: { url: 'https://docs.example.org/sql-vacuum.html' },
      });
      await engine.storage.put('fixtures/web/stovsuging.html', Buffer.from(norwegianPage, 'utf8'), {
        contentType: 'text/html; charset=utf-8',
      });
    });
    afterAll(async () => {
      await engine.close();
    });

    async function ingest(yaml: string, storageKey: string): Promise<string> {
      const config = await engine.configs.create({ config_yaml: yaml });
      expect(config.validation_report.is_valid, JSON.stringify(config.validation_report)).toBe(true);
      const execution = await engine.orchestrator.run(config.id, { payload: { storage_key: storageKey } });
      await waitForStatus(engine.repository, execution.id, 'completed', 60_000);
      return execution.id;
    }

    const of = (execution: string, stage: string) =>
      tapped.filter((entry) => entry.execution === execution && entry.stage === stage);

    it('runs the chain with the payloads of spec 2.2 and fills storage and the index', async () => {
      const execution = await ingest(ingestYaml, 'fixtures/web/vacuum.html');
      const db = engine.database.db;

      const [retrieved] = of(execution, 'storage_retriever');
      expect(Object.keys(retrieved?.payload ?? {}).sort()).toEqual(['html', 'source_key', 'source_url']);
      expect(retrieved?.payload).toMatchObject({
        source_key: 'fixtures/web/vacuum.html',
        source_url: 'https://docs.example.org/sql-vacuum.html',
      });

      const [converted] = of(execution, 'html_to_markdown');
      const markdown = converted?.payload.markdown as string;
      expect(converted?.payload.front_matter).toEqual({
        title: 'VACUUM | Example Docs',
        url: 'https://docs.example.org/sql-vacuum.html',
        language: 'en',
        description: 'Garbage-collect and optionally analyze a database',
      });
      expect(markdown).toContain('```sql\nVACUUM [ ( option [, ...] ) ]');
      expect(markdown).toContain('| Option | Meaning |\n| --- | --- |');
      for (const boilerplate of ['Home', 'Next', 'Docs', 'Copyright'])
        expect(markdown).not.toContain(boilerplate);
      const document = {
        source_key: 'https://docs.example.org/sql-vacuum.html',
        url: 'https://docs.example.org/sql-vacuum.html',
        title: 'VACUUM | Example Docs',
        language: 'english',
      };
      // The stored page read is the document's object until markdown_storage_writer stores its markdown.
      expect(converted?.metadata.document).toEqual({ ...document, storage_key: 'fixtures/web/vacuum.html' });

      const [written] = of(execution, 'markdown_storage_writer');
      const markdownKey = written?.payload.storage_key as string;
      expect(Object.keys(written?.payload ?? {}).sort()).toEqual(['segment_count', 'storage_key']);
      expect(markdownKey.startsWith(`${execution}/markdown_storage_writer/`)).toBe(true);
      const stored = (await engine.storage.get(markdownKey)).toString('utf8');
      expect(stored.startsWith('---\ntitle: VACUUM | Example Docs\n')).toBe(true);
      expect(stored.endsWith(markdown)).toBe(true);

      const [segmented] = of(execution, 'smart_segmenter');
      const segments = segmented?.payload.segments as {
        text: string;
        token_count: number;
        heading_path: string[];
      }[];
      expect(segments.length).toBe(written?.payload.segment_count);
      expect(segments.length).toBeGreaterThan(3);
      for (const segment of segments) {
        expect(Object.keys(segment).sort()).toEqual(['heading_path', 'text', 'token_count']);
        expect(segment.token_count).toBeLessThanOrEqual(120);
        expect(segment.heading_path[0]).toBe('VACUUM');
      }
      expect(segments.some((segment) => segment.heading_path.join('/') === 'VACUUM/Notes')).toBe(true);

      const published = of(execution, 'segment_publisher');
      expect(
        published.map((entry) => entry.payload.segment_index).sort((a, b) => Number(a) - Number(b)),
      ).toEqual(segments.map((_, index) => index));
      for (const entry of published) {
        expect(Object.keys(entry.payload).sort()).toEqual(['segment', 'segment_index', 'total']);
        expect(entry.payload.total).toBe(segments.length);
        expect(entry.metadata.document).toEqual({ ...document, storage_key: markdownKey });
      }

      const embedded = of(execution, 'embedding_generator');
      expect(embedded).toHaveLength(segments.length);
      for (const entry of embedded) {
        expect(Object.keys(entry.payload).sort()).toEqual(['model', 'segment_id', 'vector_storage_key']);
        expect(entry.payload.model).toBe('hash');
        const vector = await engine.storage.stat(entry.payload.vector_storage_key as string);
        expect(vector).toMatchObject({ size: 384 * 4, content_type: 'application/octet-stream' });
        expect(vector?.metadata).toMatchObject({
          model: 'hash',
          dimensions: 384,
          segment_id: entry.payload.segment_id,
        });
      }

      const documents = await db.selectFrom('knowledge_documents').selectAll().execute();
      expect(documents).toHaveLength(1);
      expect(documents[0]).toMatchObject({
        source_key: document.source_key,
        language: 'english',
        storage_key: markdownKey,
        execution_id: execution,
      });
      const segmentRows = await db
        .selectFrom('knowledge_segments')
        .select(['segment_id', 'segment_index', 'text'])
        .orderBy('segment_index')
        .execute();
      expect(segmentRows.map((row) => row.text)).toEqual(segments.map((segment) => segment.text));
      expect(new Set(segmentRows.map((row) => row.segment_id))).toEqual(
        new Set(embedded.map((entry) => entry.payload.segment_id)),
      );
      const embeddingRows = await db
        .selectFrom('knowledge_embeddings')
        .select(['model', 'dimensions'])
        .execute();
      expect(embeddingRows).toHaveLength(segments.length);
      expect(embeddingRows.every((row) => row.model === 'hash' && row.dimensions === 384)).toBe(true);
      // English stemming: "vacuumed" finds "vacuuming".
      const found = await sql<{
        count: string;
      }>`select count(*) as count from knowledge_segments where search_vector @@ plainto_tsquery('english', 'vacuumed statistics')`.execute(
        db,
      );
      expect(Number(found.rows[0]?.count)).toBeGreaterThan(0);
    });

    it('re-running a page updates its rows instead of adding more', async () => {
      const db = engine.database.db;
      const count = async (table: 'knowledge_documents' | 'knowledge_segments' | 'knowledge_embeddings') =>
        Number(
          (
            await db
              .selectFrom(table)
              .select((expression) => expression.fn.countAll<string>().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      const before = [
        await count('knowledge_documents'),
        await count('knowledge_segments'),
        await count('knowledge_embeddings'),
      ];
      const again = await ingest(ingestYaml, 'fixtures/web/vacuum.html');
      expect([
        await count('knowledge_documents'),
        await count('knowledge_segments'),
        await count('knowledge_embeddings'),
      ]).toEqual(before);
      const executions = await db
        .selectFrom('knowledge_segments')
        .select('execution_id')
        .distinct()
        .execute();
      expect(executions).toEqual([{ execution_id: again }]);
    });

    it('ends in segment_storage: segments stored as JSON and indexed in the page language', async () => {
      const execution = await ingest(segmentStorageYaml, 'fixtures/web/stovsuging.html');
      const [stored] = of(execution, 'segment_storage');
      expect(Object.keys(stored?.payload ?? {}).sort()).toEqual(['segment_count', 'storage_key']);
      const json = JSON.parse(
        (await engine.storage.get(stored?.payload.storage_key as string)).toString('utf8'),
      );
      expect(json.document).toEqual({
        source_key: 'fixtures/web/stovsuging.html',
        url: null,
        title: 'Om støvsuging av tabeller',
        language: 'norwegian',
        storage_key: 'fixtures/web/stovsuging.html',
      });
      expect(json.segments).toHaveLength(stored?.payload.segment_count as number);
      const db = engine.database.db;
      const document = await db
        .selectFrom('knowledge_documents')
        .selectAll()
        .where('source_key', '=', 'fixtures/web/stovsuging.html')
        .executeTakeFirstOrThrow();
      // The index points at the stored page (what a citation opens), not at the segments JSON.
      expect(document).toMatchObject({ language: 'norwegian', storage_key: 'fixtures/web/stovsuging.html' });
      const rows = await db
        .selectFrom('knowledge_segments')
        .select(['language', 'text'])
        .where('document_id', '=', document.document_id)
        .execute();
      expect(rows.length).toBe(stored?.payload.segment_count);
      expect(rows.every((row) => row.language === 'norwegian')).toBe(true);
      expect(rows.map((row) => row.text).join('\n')).not.toContain('Forside');
      // Norwegian stemming: "tabellene" finds "tabell".
      const found = await sql<{
        count: string;
      }>`select count(*) as count from knowledge_segments where search_vector @@ plainto_tsquery('norwegian', 'tabellene')`.execute(
        db,
      );
      expect(Number(found.rows[0]?.count)).toBeGreaterThan(0);
    });
  });
}
