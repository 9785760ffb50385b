/**
 * kbase_writer's own checks against the loopback HTTP knowledge base: a concept without a slug
 * is refused, stored sync state of another shape fails the message, and a delete reports the
 * requests it made (issue 32).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type HttpKnowledgeBaseDouble,
  KBASE_TOKEN,
  startHttpKnowledgeBase,
} from '../../../test/helpers/kbase-doubles.js';
import { LOOPBACK_FETCH } from '../../../test/helpers/test-site.js';
import { type AdapterTestKit, collectOutputs, createAdapterTestKit } from '../adapter-testing.js';
import { kbaseWriter } from './kbase-writer.js';

describe('kbase_writer', () => {
  let kbase: HttpKnowledgeBaseDouble;
  let kit: AdapterTestKit;
  let handler: ReturnType<typeof kbaseWriter.create>;

  beforeAll(async () => {
    kbase = await startHttpKnowledgeBase();
    kit = await createAdapterTestKit({
      settings: {
        ...LOOPBACK_FETCH,
        secrets: { kbase: KBASE_TOKEN },
        secret_origins: { kbase: [new URL(kbase.url).origin] },
      },
    });
    handler = kbaseWriter.create(
      {
        target: { kind: 'http', url: kbase.url, token_secret: 'kbase' },
        request_timeout: 5,
        max_attempts: 1,
        max_retry_after: 0,
      },
      kit.resources,
    );
  });
  afterAll(async () => {
    await kit?.close();
    await kbase?.close();
  });

  const concept = (slug: string) => ({
    knowledge_base: 'kb',
    map_key: 'maps/kb.json',
    map_version: 1,
    concept: { slug, name: 'Autovacuum', aliases: [], sources: [], related: [] },
    passages: [],
    page: { markdown: '# Autovacuum\n', content_hash: `hash-${slug}`, synthesized_by: 'test' },
  });
  const run = async (payload: Record<string, unknown>, context = kit.context()) =>
    collectOutputs(await handler(payload, context));
  const scope = () => `kbase kb http ${kbase.url}`;

  it('refuses a concept without a slug instead of publishing at the target root', async () => {
    const before = kbase.requests.length;
    await expect(run(concept(''))).rejects.toThrow('the concept has no slug');
    expect(kbase.requests.length).toBe(before);
  });

  it('fails a message whose stored sync state is not a published page', async () => {
    const context = kit.context();
    await context.syncState.put(scope(), [{ key: 'garbled', value: { page_id: 42, version: 'two' } }]);
    await expect(run(concept('garbled'), context)).rejects.toThrow(
      /sync state of garbled is not a published page/,
    );
  });

  it('reports the requests a delete made', async () => {
    const published = await collectOutputs(await handler(concept('autovacuum'), kit.context()));
    expect(published[0]?.payload).toMatchObject({ action: 'created', requests: 1 });
    const removal = {
      knowledge_base: 'kb',
      map_key: 'maps/kb.json',
      map_version: 2,
      removed: { slug: 'autovacuum', name: 'Autovacuum' },
    };
    const deleted = await collectOutputs(await handler(removal, kit.context()));
    expect(deleted[0]?.payload).toMatchObject({ action: 'deleted', requests: 1 });
    expect(kbase.pages.has('autovacuum')).toBe(false);
  });
});
