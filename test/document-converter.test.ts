/**
 * document_converter in a real pipeline on every database target: url_expander fans PDF URLs
 * of the loopback test site out to pdf_fetcher, whose stored PDFs document_converter turns
 * into markdown; a terminal capture step writes what reached it (payload and envelope
 * metadata) to storage, so the test reads exactly what the next stage would receive.
 */
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAdapter } from '../src/adapters/adapter.js';
import { builtinAdapters } from '../src/adapters/builtin.js';
import { createAdapterRegistry } from '../src/adapters/registry.js';
import { databaseTargets } from './helpers/databases.js';
import { createTestEngine, type TestEngine, waitForStatus } from './helpers/engine.js';
import { LOOPBACK_FETCH, startTestSite, type TestSite } from './helpers/test-site.js';

const capture = defineAdapter({
  type: 'test_capture',
  group: 'synthetic',
  summary: 'Stores each input payload and its envelope metadata as JSON (test only).',
  config: Type.Object({}),
  input: Type.Object({}),
  output: Type.Object({}),
  terminal: true,
  create: () => async (payload, context) => {
    await context.writeObject(
      `${context.messageId}.json`,
      JSON.stringify({ payload, metadata: context.metadata }),
      {
        contentType: 'application/json',
      },
    );
    return [];
  },
});

let site: TestSite;
beforeAll(async () => {
  site = await startTestSite();
});
afterAll(async () => {
  await site?.close();
});

const pipelineYaml = (base: string) => `
init_message:
  payload:
    urls:
      - ${base}/files/guide.pdf
      - ${base}/files/report.pdf
      - ${base}/files/truncated.pdf
      - ${base}/files/no-such-file.pdf
routes:
  - id: discover
    adapters:
      - type: url_expander
        destination: documents
  - id: documents
    adapters:
      - type: pdf_fetcher
        config: { rate_limit: 50 }
        retry: { max_attempts: 1 }
      - type: document_converter
        retry: { max_attempts: 1 }
      - type: test_capture
`;

describe.each(databaseTargets())('PDF ingestion through document_converter on $name', (target) => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await createTestEngine(target, {
      registry: createAdapterRegistry([...builtinAdapters, capture]),
      settings: LOOPBACK_FETCH,
    });
  });
  afterAll(async () => {
    await engine?.close();
  });

  it('converts the linked PDFs, fails the truncated one and skips the missing one', async () => {
    const config = await engine.configs.create({ config_yaml: pipelineYaml(site.baseUrl) });
    const execution = await engine.orchestrator.run(config.id);
    await waitForStatus(engine.repository, execution.id, 'completed', 60_000);

    const captured = await engine.storage.list({ prefix: `${execution.id}/test_capture/` });
    const received = await Promise.all(
      captured.objects.map(async (object) =>
        JSON.parse((await engine.storage.get(object.key)).toString('utf8')),
      ),
    );
    const byUrl = new Map(received.map((entry) => [entry.payload.front_matter.url, entry]));
    expect([...byUrl.keys()].sort()).toEqual([
      `${site.baseUrl}/files/guide.pdf`,
      `${site.baseUrl}/files/report.pdf`,
    ]);

    const guide = byUrl.get(`${site.baseUrl}/files/guide.pdf`);
    expect(Object.keys(guide.payload).sort()).toEqual(['front_matter', 'markdown']);
    expect(guide.payload.markdown).toMatch(/^# Weir Field Guide\n\n/);
    expect(guide.payload.markdown).toContain('\n## Writing a pipeline\n');
    expect(guide.payload.front_matter).toMatchObject({
      title: 'Weir Field Guide',
      language: 'en',
      page_count: 2,
    });
    expect(guide.metadata.document).toEqual({
      source_key: `${site.baseUrl}/files/guide.pdf`,
      url: `${site.baseUrl}/files/guide.pdf`,
      title: 'Weir Field Guide',
      language: 'english',
      // The stored PDF pdf_fetcher wrote: what a citation opens when the URL is not http(s).
      storage_key: expect.stringMatching(/\/pdf_fetcher\//),
    });
    expect(byUrl.get(`${site.baseUrl}/files/report.pdf`).metadata.document).toMatchObject({
      title: 'Årsrapport 2024',
      language: 'norwegian',
    });

    const lineage = (await engine.repository.lineage({ execution_id: execution.id, limit: 1000, offset: 0 }))
      .messages;
    expect(lineage.filter((row) => row.status === 'failed').map((row) => [row.stage, row.error])).toEqual([
      ['document_converter', expect.stringMatching(/^not a readable PDF: Invalid PDF structure/)],
    ]);
    expect(lineage.filter((row) => row.status === 'skipped').map((row) => row.error)).toEqual([
      `${site.baseUrl}/files/no-such-file.pdf answered 404`,
    ]);
  });
});
