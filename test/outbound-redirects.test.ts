/**
 * Issue 30, item 1: every outbound request goes through the one client (src/http/outbound.ts),
 * whose egress policy holds at connect time on every hop, and nothing lets undici follow a
 * redirect on its own. Real servers on loopback: the "allowed" host 127.0.0.2 is the only
 * address the policies let through; the "refused" host 127.0.0.1 (where the API itself would
 * listen) answers everything, and records it. Each caller is sent a 307 (or 302) from the
 * allowed host to the refused one, and the refused host must receive nothing.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHttpKnowledgeBase } from '../src/consolidation/knowledge-base.js';
import { createOpenAiEmbedder } from '../src/embedding/openai-embedder.js';
import { createSharePointClient } from '../src/fileshare/sharepoint.js';
import { createAddressGuard } from '../src/http/address-classification.js';
import { createEgressPolicy, EGRESS_REFUSED, egressPolicy } from '../src/http/egress-policy.js';
import { EgressRefused } from '../src/http/outbound.js';
import { createWebClient } from '../src/http/web-client.js';
import { createOpenAiProvider } from '../src/llm/openai-provider.js';
import { createAddressPolicy } from '../src/webhooks/address-policy.js';
import { createSender } from '../src/webhooks/sender.js';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Server {
  base: string;
  received: Received[];
  close(): Promise<void>;
}

async function serve(host: string, answer: (request: Received, response: http.ServerResponse) => void) {
  const received: Received[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(entry);
      answer(entry, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    base: `http://${host}:${(server.address() as AddressInfo).port}`,
    received,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  } satisfies Server;
}

let refused: Server;
let allowed: Server;
let otherOrigin: Server;

beforeAll(async () => {
  refused = await serve('127.0.0.1', (_request, response) => {
    response.setHeader('content-type', 'application/json');
    response.end('{"access_token":"stolen","expires_in":3600}');
  });
  otherOrigin = await serve('127.0.0.2', (_request, response) => response.end('other origin'));
  allowed = await serve('127.0.0.2', (request, response) => {
    // /302/<path> and /307/<path> redirect to <path> on the refused host, /to-name to it by a
    // name; /other to another allowed origin; anything else is answered.
    const match = /^\/(30[1278])(\/.*)$/.exec(request.url);
    if (match) {
      response.writeHead(Number(match[1]), { location: `${refused.base}${match[2]}` });
      return response.end();
    }
    if (request.url === '/to-name') {
      response.writeHead(302, { location: `http://internal.test:${new URL(refused.base).port}/page` });
      return response.end();
    }
    if (request.url === '/other') {
      response.writeHead(302, { location: `${otherOrigin.base}/landed` });
      return response.end();
    }
    if (request.url === '/robots.txt') return response.writeHead(404).end();
    response.end('allowed');
  });
});
afterAll(async () => {
  await Promise.all([refused?.close(), allowed?.close(), otherOrigin?.close()]);
});
beforeEach(() => {
  refused.received.length = 0;
  allowed.received.length = 0;
  otherOrigin.received.length = 0;
});

/** The fetchers' policy with only the allowed host opened (the refused one is loopback). */
const fetchPolicy = () => egressPolicy(['127.0.0.2/32']);
/** A policy for the callers whose own default passes loopback (LLM, embeddings). */
const onlyAllowedHost = () =>
  createEgressPolicy({
    guard: createAddressGuard({
      permitted: new Set(['global']),
      allowedCidrs: ['127.0.0.2/32'],
      setting: 'test',
    }),
    label: 'test endpoint',
    code: EGRESS_REFUSED,
  });

describe('the egress policy at connect time', () => {
  it('refuses an IP-literal host when connecting, even to a client that follows redirects itself', async () => {
    const dispatcher = fetchPolicy().dispatcher;
    await expect(undiciFetch(`${refused.base}/direct`, { dispatcher })).rejects.toMatchObject({
      cause: { code: EGRESS_REFUSED, message: expect.stringMatching(/127\.0\.0\.1 is a loopback address/) },
    });
    // undici's own redirect following (which the service never uses) still meets the connector.
    await expect(
      undiciFetch(`${allowed.base}/307/followed`, { dispatcher, method: 'POST', body: 'secret' }),
    ).rejects.toMatchObject({ cause: { code: EGRESS_REFUSED } });
    expect(allowed.received).toHaveLength(1);
    expect(refused.received).toEqual([]);
  });
});

describe('a redirect from the allowed host to the refused one', () => {
  it('fails a kbase_writer publish (json-request) without sending the page on', async () => {
    const knowledgeBase = createHttpKnowledgeBase({
      url: `${allowed.base}/307/kb`,
      token: () => 'kb-token',
      request: { egress: fetchPolicy(), timeoutMs: 2000, maxAttempts: 1, maxRetryAfterMs: 1000 },
    });
    const page = {
      slug: 'autovacuum',
      title: 'Autovacuum',
      markdown: '# Autovacuum',
      content_hash: 'h',
      sources: [],
      map_version: 1,
    };
    await expect(knowledgeBase.publish(page, undefined, new AbortController().signal)).rejects.toThrow(
      /answered HTTP 307/,
    );
    expect(allowed.received.map((request) => request.method)).toEqual(['PUT']);
    expect(refused.received).toEqual([]);
  });

  it.each([
    302, 307,
  ])('fails the SharePoint token request on a %i, the secret sent nowhere else', async (status) => {
    const web = createWebClient({
      requestsPerSecond: 100,
      obeyRobots: false,
      timeoutMs: 2000,
      maxBytes: 100_000,
      egress: fetchPolicy(),
    });
    const client = createSharePointClient(
      {
        graphUrl: `${allowed.base}/graph/v1.0`,
        tokenUrl: `${allowed.base}/${status}/token`,
        clientId: 'client',
        clientSecret: 'graph-client-secret',
        timeoutMs: 2000,
      },
      web,
    );
    await expect(client.drives({ siteIds: ['site'] }, new AbortController().signal)).rejects.toThrow(
      new RegExp(`answered ${status} \\(a redirect, not followed`),
    );
    expect(allowed.received.map((request) => request.url)).toEqual([`/${status}/token`]);
    expect(refused.received).toEqual([]);
  });

  it('is refused to the web fetchers, an IP literal and a name alike', async () => {
    const web = (lookupTo?: string) =>
      createWebClient({
        requestsPerSecond: 100,
        obeyRobots: false,
        timeoutMs: 2000,
        maxBytes: 100_000,
        maxRetries: 0,
        egress: egressPolicy(['127.0.0.2/32'], {
          // internal.test resolves to the refused host without DNS.
          lookup: async () => (lookupTo ? [{ address: lookupTo, family: 4 }] : []),
        }),
      });
    await expect(web().get(`${allowed.base}/307/page`)).rejects.toThrow(EgressRefused);
    await expect(web('127.0.0.1').get(`${allowed.base}/to-name`)).rejects.toThrow(
      /internal\.test refused: 127\.0\.0\.1 is a loopback address/,
    );
    expect(refused.received).toEqual([]);
  });

  it('drops the credentials when a followed redirect leaves the origin', async () => {
    const web = createWebClient({
      requestsPerSecond: 100,
      obeyRobots: false,
      timeoutMs: 2000,
      maxBytes: 100_000,
      egress: fetchPolicy(),
    });
    const response = await web.get(`${allowed.base}/other`, undefined, {
      originHeaders: { authorization: 'Bearer origin-only', cookie: 'session=1' },
    });
    expect(response.body.toString()).toBe('other origin');
    expect(allowed.received[0]?.headers.authorization).toBe('Bearer origin-only');
    expect(otherOrigin.received[0]?.headers.authorization).toBeUndefined();
    expect(otherOrigin.received[0]?.headers.cookie).toBeUndefined();
  });

  it('fails an LLM completion and stream without sending the prompt on', async () => {
    const provider = createOpenAiProvider(
      {
        name: 'test',
        provider: 'openai',
        base_url: `${allowed.base}/307/v1`,
        model: 'm',
        api_key: 'llm-key',
        timeout_ms: 2000,
      },
      onlyAllowedHost(),
    );
    const request = {
      messages: [{ role: 'user' as const, content: 'the prompt' }],
      query: 'q',
      passages: [],
    };
    await expect(provider.complete(request)).rejects.toThrow(/answered HTTP 307/);
    await expect(
      (async () => {
        for await (const _chunk of provider.stream(request)) {
          // nothing arrives
        }
      })(),
    ).rejects.toThrow(/answered HTTP 307/);
    expect(allowed.received).toHaveLength(2);
    expect(refused.received).toEqual([]);
  });

  it('fails an embedding request without sending the texts on', async () => {
    const embedder = createOpenAiEmbedder({
      name: 'e',
      baseUrl: `${allowed.base}/307/v1`,
      apiKey: 'embedding-key',
      dimensions: 3,
      maxRetries: 0,
      egress: onlyAllowedHost(),
    });
    await expect(embedder.embed(['a text'])).rejects.toThrow(/answered 307/);
    expect(allowed.received).toHaveLength(1);
    expect(refused.received).toEqual([]);
  });

  it('is the answer to a webhook delivery, not followed', async () => {
    const sender = createSender({
      policy: createAddressPolicy(['127.0.0.2/32']),
      timeoutMs: 2000,
      maxSockets: 1,
    });
    const result = await sender.send({
      url: `${allowed.base}/307/hook`,
      secret: 'webhook-secret',
      deliveryId: 'd-1',
      eventType: 'execution.started',
      body: '{"id":"e-1"}',
      timestamp: new Date(),
    });
    sender.close();
    expect(result.outcome).toMatchObject({ kind: 'response', status: 307 });
    expect(refused.received).toEqual([]);
  });
});

describe('the model endpoint policy', () => {
  it('refuses a name resolving to cloud metadata without dialling it, and passes loopback', async () => {
    const { modelEndpointPolicy } = await import('../src/http/egress-policy.js');
    const dialled: string[] = [];
    const policy = modelEndpointPolicy({
      lookup: async (name) => [
        { address: name === 'metadata.test' ? '169.254.169.254' : '127.0.0.1', family: 4 },
      ],
      // Never leaves the machine: records the address and fails instead of connecting.
      connect: (options, callback) => {
        dialled.push(options.hostname);
        callback(new Error('test connector: not dialled'), null);
      },
    });
    const provider = createOpenAiProvider(
      {
        name: 'cloud',
        provider: 'openai',
        base_url: 'http://metadata.test/v1',
        model: 'm',
        timeout_ms: 2000,
      },
      policy,
    );
    const request = { messages: [{ role: 'user' as const, content: 'hi' }], query: 'q', passages: [] };
    await expect(provider.complete(request)).rejects.toThrow(
      /model endpoint metadata\.test refused: 169\.254\.169\.254 is a cloud metadata address/,
    );
    expect(dialled).toEqual([]);
    expect(await policy.check(new URL('http://local.test:11434/v1'))).toBeUndefined();
  });
});
