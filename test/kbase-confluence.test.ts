/**
 * kbase_writer's Confluence target against a loopback double of the page-writing API (Cloud
 * REST v2 and Data Center REST v1): credentials, create then update with the next version,
 * a 409 version conflict retried with the version read again, 429 honoured by Retry-After,
 * concept links as Confluence page links, and removal; and the token asked for per request URL,
 * so an undeclared origin gets nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { boundSecret } from '../src/adapters/api-access.js';
import { createHttpKnowledgeBase, type PageToPublish } from '../src/consolidation/knowledge-base.js';
import { egressPolicy } from '../src/http/egress-policy.js';
import { loadSettings } from '../src/settings.js';
import { createConfluencePublisher } from '../src/wiki/confluence-publisher.js';
import {
  type ConfluenceWriteDouble,
  KBASE_TOKEN,
  startConfluenceWriteDouble,
  startHttpKnowledgeBase,
} from './helpers/kbase-doubles.js';
import { LOOPBACK_FETCH } from './helpers/test-site.js';

const page = (markdown: string, hash = 'h1'): PageToPublish => ({
  slug: 'autovacuum',
  title: 'Autovacuum',
  markdown,
  content_hash: hash,
  sources: [],
  map_version: 1,
});

const markdown =
  '# Autovacuum\n\nAutovacuum runs in the background. [1]\n\n## Related concepts\n\n- [VACUUM](vacuum.md)\n';

describe.each(['cloud', 'datacenter'] as const)('Confluence publisher (%s)', (flavor) => {
  let double: ConfluenceWriteDouble | undefined;
  const waits: number[] = [];
  const publisher = (url: string, token = 'secret-token') =>
    createConfluencePublisher(
      {
        baseUrl: url,
        flavor,
        auth:
          flavor === 'cloud'
            ? { scheme: 'basic', username: 'bot@example.com', token: () => token }
            : { scheme: 'bearer', token: () => token },
        spaceKey: 'KB',
        titlePrefix: 'KB: ',
      },
      {
        egress: egressPolicy(LOOPBACK_FETCH.fetch_allowed_cidrs),
        timeoutMs: 5000,
        maxAttempts: 3,
        maxRetryAfterMs: 10_000,
        sleep: async (ms) => {
          waits.push(ms);
        },
      },
    );

  afterEach(async () => {
    await double?.close();
    waits.length = 0;
  });

  it('creates, updates with the next version, retries a version conflict and waits out a 429', async () => {
    double = await startConfluenceWriteDouble(
      flavor,
      flavor === 'cloud' ? { username: 'bot@example.com', token: 'secret-token' } : { token: 'secret-token' },
    );
    const target = publisher(double.url);
    const signal = new AbortController().signal;

    const created = await target.publish(page(markdown), undefined, signal);
    expect(created).toMatchObject({ action: 'created', version: 1 });
    const stored = double.pages.get(created.page_id as string);
    expect(stored?.title).toBe('KB: Autovacuum');
    expect(stored?.body).toContain('<h1>Autovacuum</h1>');
    expect(stored?.body).toContain('<ri:page ri:content-title="KB: VACUUM" />');

    const updated = await target.publish(page(`${markdown}\nMore. [1]\n`, 'h2'), created, signal);
    expect(updated).toMatchObject({ action: 'updated', page_id: created.page_id, version: 2 });

    // Someone saved version 3 meanwhile: the 409 is retried with version 4.
    double.conflictOnce = true;
    const afterConflict = await target.publish(page(`${markdown}\nEven more. [1]\n`, 'h3'), updated, signal);
    expect(afterConflict).toMatchObject({ action: 'updated', version: 4 });
    expect(double.pages.get(created.page_id as string)?.version).toBe(4);

    // Rate limited: waits the Retry-After, then goes on.
    double.throttleOnce = 2;
    const afterThrottle = await target.publish(page(`${markdown}\nLast. [1]\n`, 'h4'), afterConflict, signal);
    expect(afterThrottle).toMatchObject({ action: 'updated', version: 5 });
    expect(waits).toEqual([2000]);

    // Without the page id (state lost), the page is found by title and updated, not duplicated.
    const byTitle = await target.publish(page(`${markdown}\nAgain. [1]\n`, 'h5'), undefined, signal);
    expect(byTitle).toMatchObject({ action: 'updated', page_id: created.page_id, version: 6 });
    expect(double.pages.size).toBe(1);

    // Removal reports the requests it made: the page read by id, then deleted.
    expect(await target.remove('autovacuum', 'Autovacuum', byTitle, signal)).toEqual({
      removed: true,
      requests: 2,
    });
    expect(double.pages.size).toBe(0);
    // Gone: not found by id (404), nor by title.
    expect(await target.remove('autovacuum', 'Autovacuum', byTitle, signal)).toEqual({
      removed: false,
      requests: 2,
    });
  });

  it('counts the requests of each publish apart when two run at once', async () => {
    double = await startConfluenceWriteDouble(
      flavor,
      flavor === 'cloud' ? { username: 'bot@example.com', token: 'secret-token' } : { token: 'secret-token' },
    );
    const target = publisher(double.url);
    const signal = new AbortController().signal;
    // Warm the space id (cloud), so each create below makes the same requests.
    const first = await target.publish(
      { ...page(markdown), slug: 'first', title: 'First' },
      undefined,
      signal,
    );
    const alone = await target.publish(
      { ...page(markdown), slug: 'alone', title: 'Alone' },
      undefined,
      signal,
    );
    const together = await Promise.all(
      ['a', 'b', 'c'].map((name) =>
        target.publish({ ...page(markdown), slug: name, title: name.toUpperCase() }, undefined, signal),
      ),
    );
    expect(first.requests).toBeGreaterThanOrEqual(alone.requests);
    // A create: the title looked up, then the page posted.
    expect(alone.requests).toBe(2);
    expect(together.map((result) => result.requests)).toEqual([2, 2, 2]);
  });

  it('fails at once, without retrying, on wrong credentials', async () => {
    double = await startConfluenceWriteDouble(flavor, { username: 'bot@example.com', token: 'secret-token' });
    const target = publisher(double.url, 'wrong-token');
    await expect(
      target.publish(page(markdown), undefined, new AbortController().signal),
    ).rejects.toMatchObject({
      permanent: true,
      message: expect.stringMatching(/401: check the wiki credentials/),
    });
    expect(double.requests).toHaveLength(1);
  });
});

/**
 * The token is asked for per request URL (boundSecret): a target outside the secret's declared
 * origins, as a config stored before the origins changed would name, gets no request at all.
 */
describe('publishing with a secret bound to its origins', () => {
  const request = {
    egress: egressPolicy(LOOPBACK_FETCH.fetch_allowed_cidrs),
    timeoutMs: 5000,
    maxAttempts: 1,
    maxRetryAfterMs: 0,
  };
  const settingsFor = (origin: string) =>
    loadSettings({}, { secrets: { kb: KBASE_TOKEN }, secret_origins: { kb: [origin] } });
  const signal = new AbortController().signal;

  it('the http target: sends the token to a declared origin only', async () => {
    const kbase = await startHttpKnowledgeBase();
    try {
      const declared = boundSecret(settingsFor(new URL(kbase.url).origin), 'kb');
      const target = createHttpKnowledgeBase({ url: kbase.url, token: declared.valueFor, request });
      await expect(target.publish(page(markdown), undefined, signal)).resolves.toMatchObject({
        action: 'created',
      });
      const elsewhere = boundSecret(settingsFor('https://kb.acme.example'), 'kb');
      const refused = createHttpKnowledgeBase({ url: kbase.url, token: elsewhere.valueFor, request });
      await expect(refused.publish(page(markdown, 'h2'), undefined, signal)).rejects.toMatchObject({
        permanent: true,
        message: expect.stringContaining(`secret kb may not be sent to ${new URL(kbase.url).origin}`),
      });
      expect(kbase.requests).toHaveLength(1);
    } finally {
      await kbase.close();
    }
  });

  it('the Confluence target: no request leaves for an undeclared origin', async () => {
    const double = await startConfluenceWriteDouble('datacenter', { token: KBASE_TOKEN });
    try {
      const secret = boundSecret(settingsFor('https://wiki.acme.example'), 'kb');
      const target = createConfluencePublisher(
        {
          baseUrl: double.url,
          flavor: 'datacenter',
          auth: { scheme: 'bearer', token: secret.valueFor },
          spaceKey: 'KB',
          titlePrefix: '',
        },
        request,
      );
      await expect(target.publish(page(markdown), undefined, signal)).rejects.toMatchObject({
        permanent: true,
        message: expect.stringContaining('declared origins are https://wiki.acme.example'),
      });
      expect(double.requests).toEqual([]);
    } finally {
      await double.close();
    }
  });
});
