/**
 * The whole web ingestion chain on the loopback test site, through the real engine, on both
 * databases: robots.txt -> sitemap index (nested and gzipped sitemaps) -> one message per URL
 * -> JS-rendering crawl in Chromium (PDF links fanned out to pdf_fetcher -> document_converter)
 * -> stored HTML -> markdown -> segments -> embeddings in the knowledge index. Checks lineage
 * (404 and robots-disallowed pages skipped), stored objects with sidecars, the payload shape of
 * every stage (spec 2.2, read off the wire) and what search will read.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Broker } from '../src/broker/broker.js';
import { closeBrowser } from '../src/browser/chromium.js';
import { decodeEnvelope, type Envelope } from '../src/engine/envelope.js';
import { engineCombinations } from './helpers/brokers.js';
import { chromiumPath, needsChromium } from './helpers/chromium.js';
import { vectorDatabaseTargets } from './helpers/databases.js';
import { createTestEngine, type TestEngine, waitForStatus } from './helpers/engine.js';
import { LOOPBACK_FETCH, startTestSite, type TestSite } from './helpers/test-site.js';

/** Every key of each adapter's payload per spec 2.2 (plus the adapters whose payload it leaves open). */
const payloadKeys: Record<string, string[]> = {
  sitemap_parser: ['urls'],
  url_expander: ['url'],
  web_crawler: ['headers', 'html', 'status', 'url'],
  'web_crawler:pdf': ['url'],
  web_content_storage: ['content_length', 'storage_key', 'url'],
  storage_retriever: ['html', 'source_key', 'source_url'],
  html_to_markdown: ['front_matter', 'markdown'],
  smart_segmenter: ['segments'],
  segment_publisher: ['segment', 'segment_index', 'total'],
  // embedding_generator ends its route here, so nothing of it crosses the wire; its payload is
  // checked in src/adapters/embedding/embedding-generator.test.ts.
};

function pipeline(baseUrl: string): string {
  return `
name: site-ingestion
init_message:
  route: discover
  payload: { url: ${JSON.stringify(`${baseUrl}/robots.txt`)} }
routes:
  - id: discover
    adapters:
      - type: sitemap_parser
        config: { rate_limit: 200 }
      - type: url_expander
        destination: pages
  - id: pages
    adapters:
      - type: web_crawler
        config: { rate_limit: 200, pdf_destination: pdfs }
        concurrency: 2
        retry: { max_attempts: 1 }
      - type: web_content_storage
      - type: storage_retriever
      - type: html_to_markdown
      - type: smart_segmenter
        config: { max_tokens: 200 }
      - type: segment_publisher
        destination: embed
  - id: pdfs
    adapters:
      - type: pdf_fetcher
        config: { rate_limit: 200 }
        retry: { max_attempts: 1 }
      - type: document_converter
        retry: { max_attempts: 1 }
      - type: smart_segmenter
      - type: segment_publisher
        destination: embed
  - id: embed
    adapters:
      - type: embedding_generator
        batch: { size: 16, max_wait_ms: 20 }
`;
}

/** A broker that keeps every body it publishes, to read the payloads off the wire. */
function recordingBroker(inner: Broker): { broker: Broker; bodies: Uint8Array[] } {
  const bodies: Uint8Array[] = [];
  const broker: Broker = {
    kind: inner.kind,
    publish: (queue, body, headers) => {
      bodies.push(body);
      return inner.publish(queue, body, headers);
    },
    subscribe: (queue, options, handler) => inner.subscribe(queue, options, handler),
    publishTopic: (topic, body, headers) => inner.publishTopic(topic, body, headers),
    subscribeTopic: (topic, handler) => inner.subscribeTopic(topic, handler),
    check: () => inner.check(),
    describeConnection: () => inner.describeConnection(),
    close: () => inner.close(),
  };
  return { broker, bodies };
}

/** Whether each database target has pgvector (the server is asked once). */
const vectorsOn = new Map((await vectorDatabaseTargets()).map((target) => [target.name, target.vectors]));

let site: TestSite;
beforeAll(async () => {
  site = await startTestSite();
});
afterAll(async () => {
  await closeBrowser();
  await site.close();
});

describe.each(await engineCombinations())(
  'web ingestion end to end on $name',
  needsChromium,
  ({ database: target, broker: brokerTarget }) => {
    let engine: TestEngine;
    let bodies: Uint8Array[];
    let executionId: string;

    beforeAll(async () => {
      const recording = recordingBroker(await brokerTarget.open());
      bodies = recording.bodies;
      engine = await createTestEngine(target, {
        broker: recording.broker,
        settings: { ...LOOPBACK_FETCH, chromium_path: chromiumPath },
      });
      const config = await engine.configs.create({ config_yaml: pipeline(site.baseUrl) });
      expect(config.validation_report.error_count).toBe(0);
      const execution = await engine.orchestrator.run(config.id);
      executionId = execution.id;
      await waitForStatus(engine.repository, executionId, 'completed', 90_000);
    }, 120_000);
    afterAll(() => engine?.close());

    it('skips the 404 and the robots-disallowed page, and fails only the broken PDF', async () => {
      const lineage = await engine.repository.lineage({ execution_id: executionId, limit: 1000, offset: 0 });
      const skipped = lineage.messages
        .filter((row) => row.status === 'skipped')
        .map((row) => row.error ?? '');
      expect(skipped).toHaveLength(2);
      expect(skipped.some((reason) => /404/.test(reason))).toBe(true);
      expect(skipped.some((reason) => /robots/i.test(reason))).toBe(true);
      const failed = lineage.messages.filter((row) => row.status === 'failed');
      expect(failed.map((row) => row.stage)).toEqual(['document_converter']);
      expect(failed[0]?.error).toMatch(/not a PDF|PDF/i);
    });

    it('emits exactly the payload fields of spec 2.2 at every stage', async () => {
      const seen = new Map<string, Envelope[]>();
      for (const body of bodies) {
        const envelope = await decodeEnvelope(body, engine.storage);
        if (envelope.execution_id !== executionId) continue;
        // web_crawler also fans PDF links out to the pdfs route, as `{url}` like url_expander.
        const stage =
          envelope.stage === 'web_crawler' && envelope.route_id === 'pdfs'
            ? 'web_crawler:pdf'
            : envelope.stage;
        seen.set(stage, [...(seen.get(stage) ?? []), envelope]);
      }
      for (const [stage, keys] of Object.entries(payloadKeys)) {
        const envelopes = seen.get(stage) ?? [];
        expect(envelopes.length, stage).toBeGreaterThan(0);
        for (const envelope of envelopes) expect(Object.keys(envelope.payload).sort(), stage).toEqual(keys);
      }
      const segment = seen.get('segment_publisher')?.[0]?.payload.segment as Record<string, unknown>;
      expect(Object.keys(segment).sort()).toEqual(['heading_path', 'text', 'token_count']);
      expect(seen.get('pdf_fetcher')?.[0]?.payload).toMatchObject({ content_type: 'application/pdf' });
    });

    it('indexes the rendered, re-encoded, redirected and PDF pages once each, in their languages', async () => {
      const documents = await engine.database.db
        .selectFrom('knowledge_documents')
        .select(['url', 'language', 'title'])
        .orderBy('url')
        .execute();
      const paths = documents.map((document) => new URL(document.url ?? '').pathname);
      expect(paths).toEqual(
        expect.arrayContaining([
          '/articles/getting-started.html', // also reached through /redirect/start: one document
          '/articles/norsk-veiledning.html',
          '/articles/pipelines.html',
          '/js/rendered.html',
          '/legacy/latin1.html',
          '/throttled/page',
          '/downloads/sample.pdf',
        ]),
      );
      expect(new Set(paths).size).toBe(paths.length);
      expect(paths).not.toContain('/private/secret.html');
      const norwegian = documents.find((document) => document.url?.endsWith('norsk-veiledning.html'));
      expect(norwegian?.language).toBe('norwegian');

      // Only rendered by JavaScript: the crawl must have run the page's script.
      const rendered = await sql<{ count: number }>`select count(*)::int as count from knowledge_segments s
      join knowledge_documents d using (document_id)
      where d.url like '%/js/rendered.html' and length(s.text) > 20`.execute(engine.database.db);
      expect(rendered.rows[0]?.count).toBeGreaterThan(0);

      const counts = await sql<{ segments: number; embeddings: number }>`select
      (select count(*)::int from knowledge_segments) as segments,
      (select count(*)::int from knowledge_embeddings where model = 'hash') as embeddings`.execute(
        engine.database.db,
      );
      expect(counts.rows[0]?.segments).toBeGreaterThan(5);
      expect(counts.rows[0]?.embeddings).toBe(counts.rows[0]?.segments);
    });

    // Which of the two the target gets is decided by whether it has pgvector: each target runs
    // the test that its database can pass, and asserts all of what its title says.
    if (vectorsOn.get(target.name)) {
      it('builds the model HNSW index once the execution has ended', async () => {
        const deadline = Date.now() + 20_000;
        let vectorIndex: string | null = null;
        while (!vectorIndex && Date.now() < deadline) {
          const model = await engine.database.db
            .selectFrom('knowledge_models')
            .select('vector_index')
            .where('model', '=', 'hash')
            .executeTakeFirstOrThrow();
          vectorIndex = model.vector_index;
          if (!vectorIndex) await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(vectorIndex, 'no HNSW index within 20 s of the execution ending').toBeTruthy();
        const definition = await sql<{
          indexdef: string;
        }>`select indexdef from pg_indexes where indexname = ${vectorIndex}`.execute(engine.database.db);
        expect(definition.rows[0]?.indexdef).toMatch(/USING hnsw/);
      });
    } else {
      it('keeps every vector but builds no HNSW index on a server without pgvector', async () => {
        const pgvector = await sql<{ present: boolean }>`select exists (select 1 from pg_extension
        where extname = 'vector') as present`.execute(engine.database.db);
        expect(pgvector.rows[0]?.present).toBe(false);
        const model = await engine.database.db
          .selectFrom('knowledge_models')
          .select('vector_index')
          .where('model', '=', 'hash')
          .executeTakeFirstOrThrow();
        expect(model.vector_index).toBeNull();
        const counts = await sql<{ segments: number; embeddings: number }>`select
        (select count(*)::int from knowledge_segments) as segments,
        (select count(*)::int from knowledge_embeddings where model = 'hash') as embeddings`.execute(
          engine.database.db,
        );
        expect(counts.rows[0]?.embeddings).toBeGreaterThan(0);
        expect(counts.rows[0]?.embeddings).toBe(counts.rows[0]?.segments);
      });
    }

    it('stores the fetched HTML, the PDF and every vector with sidecars naming their stage and execution', async () => {
      const html = await engine.storage.list({ prefix: `${executionId}/web_content_storage/` });
      expect(html.objects.length).toBeGreaterThanOrEqual(6);
      for (const object of html.objects) {
        expect(object.content_type).toMatch(/text\/html/);
        expect(object.metadata).toMatchObject({ execution_id: executionId, stage: 'web_content_storage' });
        expect(String(object.metadata.url)).toMatch(/^http:\/\/127\.0\.0\.1/);
      }
      const pdfs = await engine.storage.list({ prefix: `${executionId}/pdf_fetcher/` });
      expect(pdfs.objects.map((object) => object.content_type)).toContain('application/pdf');
      const vectors = await engine.storage.list({
        prefix: `${executionId}/embedding_generator/`,
        limit: 1000,
      });
      const first = vectors.objects[0];
      expect(first?.size).toBe(384 * 4);
      expect(first?.metadata).toMatchObject({ model: 'hash', dimensions: 384 });
    });
  },
);
