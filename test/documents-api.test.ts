/**
 * The knowledge index by document (Weir's own): GET /chat/documents names each indexed source
 * with its config, language, segment count and last update, filtered by config, language and
 * source; DELETE /chat/documents/{id} removes a source from the index, so search stops finding
 * it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKnowledgeIndex } from '../src/search-index/knowledge-index.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { databaseTargets } from './helpers/databases.js';

describe.each(databaseTargets())('indexed documents API on $name', (target) => {
  let test: TestApp;
  let executionId: string;
  let configId: string;
  beforeAll(async () => {
    test = await createTestApp(target);
    const config = await test.app.inject({
      method: 'POST',
      url: '/api/v1/configs',
      payload: {
        config_yaml: 'name: handbook-index\nroutes:\n  - id: r\n    adapters: [{ type: synthetic_sink }]\n',
      },
    });
    configId = config.json().id;
    const run = await test.app.inject({
      method: 'POST',
      url: `/api/v1/configs/${configId}/run?skip_init_message=true&tag=handbook`,
    });
    executionId = run.json().id;
    const index = createKnowledgeIndex(test.database.db);
    const page = (slug: string, title: string, language: 'english' | 'norwegian', texts: string[]) => ({
      document: {
        sourceKey: `https://handbook.example/${slug}`,
        url: `https://handbook.example/${slug}`,
        title,
        language,
        executionId,
      },
      segments: texts.map((text, segmentIndex) => ({
        segmentIndex,
        text,
        tokenCount: 8,
        headingPath: [title],
      })),
    });
    await index.indexDocuments([
      page('retries', 'Webhook retries', 'english', [
        'Deliveries are retried with exponential backoff.',
        'A delivery that keeps failing ends in the dead letter state.',
        'Retry-After is honoured.',
      ]),
      page('ferie', 'Ferie', 'norwegian', ['Ferie søkes i personalportalen.']),
    ]);
  });
  afterAll(async () => {
    await test?.close();
  });

  const list = async (query = '') =>
    (await test.app.inject({ method: 'GET', url: `/api/v1/chat/documents${query}` })).json();
  const search = async (query: string) =>
    (await test.app.inject({ method: 'POST', url: '/api/v1/chat/search/keyword', payload: { query } })).json()
      .results as Array<{ source: { url: string } }>;

  it('lists each indexed source with its config, language, segment count and last update', async () => {
    const answer = await list();
    expect(answer.total).toBe(2);
    const retries = answer.documents.find((item: { title: string }) => item.title === 'Webhook retries');
    expect(retries).toMatchObject({
      source_key: 'https://handbook.example/retries',
      url: 'https://handbook.example/retries',
      language: 'en',
      execution_id: executionId,
      config_id: configId,
      config_name: 'handbook-index',
      tag: 'handbook',
      segment_count: 3,
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
  });

  it('filters by config, language and source, and refuses a language search does not know', async () => {
    expect((await list(`?config_id=${configId}`)).total).toBe(2);
    expect((await list('?config_id=00000000-0000-7000-8000-000000000000')).total).toBe(0);
    const norwegian = await list('?language=nb');
    expect(norwegian.documents.map((item: { title: string }) => item.title)).toEqual(['Ferie']);
    expect((await list('?language=norwegian')).total).toBe(1);
    const bySource = await list('?source=RETRIES');
    expect(bySource.documents.map((item: { title: string }) => item.title)).toEqual(['Webhook retries']);
    expect((await list('?limit=1&offset=5')).total).toBe(2);
    const unknown = await test.app.inject({ method: 'GET', url: '/api/v1/chat/documents?language=klingon' });
    expect(unknown.statusCode).toBe(400);
  });

  it('removes a source from the index: search no longer finds it, and a second delete is 404', async () => {
    expect((await search('exponential backoff')).map((result) => result.source.url)).toContain(
      'https://handbook.example/retries',
    );
    const [document] = (await list('?source=retries')).documents;
    const removed = await test.app.inject({
      method: 'DELETE',
      url: `/api/v1/chat/documents/${document.document_id}`,
    });
    expect(removed.statusCode).toBe(200);
    expect(removed.json()).toEqual({
      document_id: document.document_id,
      source_key: 'https://handbook.example/retries',
      removed_segments: 3,
    });
    expect(await search('exponential backoff')).toEqual([]);
    expect((await list()).documents.map((item: { title: string }) => item.title)).toEqual(['Ferie']);
    const again = await test.app.inject({
      method: 'DELETE',
      url: `/api/v1/chat/documents/${document.document_id}`,
    });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toMatchObject({ code: 'document_not_found' });
  });
});
