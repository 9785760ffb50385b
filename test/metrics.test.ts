/**
 * GET /metrics (issue 36 item 1; docs/operations.md, "Metrics"): Prometheus text that counts
 * what the engine, the webhooks, the search endpoints and the database did, guarded like the
 * API or by a scraper's own token, with bounded labels.
 */

import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMetricsServer } from '../src/api/metrics-server.js';
import { buildApp } from '../src/app.js';
import { loadSettings } from '../src/settings.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { databaseTargets } from './helpers/databases.js';
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.js';

const pipeline = `
name: metrics-fanout
routes:
  - id: generate
    adapters:
      - type: synthetic_fanout
        config: { count: 6 }
        destination: sink
  - id: sink
    adapters:
      - type: synthetic_sink
        config: { fail_every: 3, failure: permanent }
        retry: { max_attempts: 1, backoff_ms: 0 }
`;

/** Sample lines of the exposition text: `name{a="b",...} value`. */
function samples(text: string): Array<{ name: string; labels: Record<string, string>; value: number }> {
  const found = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1] as string] = pair[2] as string;
    found.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return found;
}

/** The sum of a metric's samples whose labels include `labels`. */
function sampleSum(text: string, name: string, labels: Record<string, string> = {}): number {
  return samples(text)
    .filter((sample) => sample.name === name)
    .filter((sample) => Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
    .reduce((total, sample) => total + sample.value, 0);
}

describe.each(databaseTargets())('GET /metrics on $name', (target) => {
  let test: TestApp;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    test = await createTestApp(target, {
      environment: { WEIR_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8, ::1/128' },
    });
  });
  afterAll(async () => {
    await test?.close();
    await receiver?.close();
  });

  async function scrape(): Promise<string> {
    const response = await test.app.inject({ url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return response.body;
  }

  it('counts messages per route, stage and outcome, executions by outcome and webhook deliveries by result', async () => {
    const registered = await test.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      payload: { url: receiver.url, event_types: ['execution.completed'], secret: receiver.secret },
    });
    expect(registered.statusCode).toBe(201);
    const before = await scrape();
    const created = await test.app.inject({
      method: 'POST',
      url: '/api/v1/configs',
      payload: { config_yaml: pipeline },
    });
    expect(created.statusCode).toBe(201);
    const run = await test.app.inject({ method: 'POST', url: `/api/v1/configs/${created.json().id}/run` });
    expect(run.statusCode).toBe(201);
    const waited = await test.app.inject({
      method: 'POST',
      url: `/api/v1/executions/${run.json().id}/wait`,
      payload: { timeout_seconds: 60 },
    });
    expect(waited.json().status).toBe('completed');
    await receiver.waitFor(1, 20_000);
    // The delivery's result is recorded once the receiver's answer is in.
    await expect
      .poll(
        async () =>
          sampleSum(await scrape(), 'weir_webhook_deliveries_total', { result: '2xx' }) -
          sampleSum(before, 'weir_webhook_deliveries_total', { result: '2xx' }),
        { timeout: 10_000 },
      )
      .toBe(1);
    const sink = { route: 'sink', stage: 'synthetic_sink', adapter: 'synthetic_sink' };
    // A sink's handler still awaits its ack after its finish ended the execution.
    await expect
      .poll(async () => sampleSum(await scrape(), 'weir_messages_in_flight', sink), { timeout: 10_000 })
      .toBe(0);
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) =>
      sampleSum(after, name, labels) - sampleSum(before, name, labels);

    expect(delta('weir_messages_total', { ...sink, status: 'completed' })).toBe(4);
    expect(delta('weir_messages_total', { ...sink, status: 'failed' })).toBe(2);
    expect(delta('weir_messages_total', { route: 'generate', status: 'completed' })).toBe(1);
    expect(delta('weir_message_processing_seconds_count', sink)).toBe(6);
    expect(delta('weir_executions_total', { status: 'completed', outcome: 'partial' })).toBe(1);
    expect(delta('weir_webhook_delivery_seconds_count', { result: '2xx' })).toBe(1);
    expect(sampleSum(after, 'weir_messages_in_flight', sink)).toBe(0);
    expect(delta('weir_db_statement_duration_seconds_count', { result: 'ok' })).toBeGreaterThan(10);
    expect(sampleSum(after, 'weir_process_resident_memory_bytes')).toBeGreaterThan(10_000_000);
    expect(after).toMatch(/^weir_broker_queued_messages \d+$/m);
  });

  it('times search requests by mode and HTTP requests by route pattern, never by raw URL', async () => {
    const before = await scrape();
    // Keyword search answers everywhere; RRF answers 503 on a server without pgvector: either
    // way the request is counted under its mode and status.
    const statuses: Record<string, number> = {};
    for (const mode of ['keyword', 'rrf']) {
      const response = await test.app.inject({
        method: 'POST',
        url: `/api/v1/chat/search/${mode}`,
        payload: { query: 'pipelines' },
      });
      statuses[mode] = response.statusCode;
    }
    expect(statuses.keyword).toBe(200);
    await test.app.inject({ url: '/api/v1/executions/0190c0de-0000-7000-8000-000000000001' });
    await test.app.inject({ url: '/no/such/path/4f1c' });
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) =>
      sampleSum(after, name, labels) - sampleSum(before, name, labels);
    for (const [mode, status] of Object.entries(statuses))
      expect(delta('weir_search_request_duration_seconds_count', { mode, status_code: String(status) })).toBe(
        1,
      );
    expect(
      delta('weir_http_request_duration_seconds_count', {
        method: 'GET',
        route: '/api/v1/executions/:execution_id',
        status_code: '404',
      }),
    ).toBe(1);
    expect(
      delta('weir_http_request_duration_seconds_count', { route: 'unmatched', status_code: '404' }),
    ).toBe(1);
    // Bounded labels: no id or raw path ever becomes a label value.
    for (const sample of samples(after)) {
      for (const value of Object.values(sample.labels)) {
        expect(value).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
        expect(value).not.toContain('4f1c');
      }
    }
  });
});

describe('GET /metrics access', () => {
  /** The API without a database: enough for the guards, quick to build. */
  async function createGuardedApp(environment: Record<string, string>) {
    const app = await buildApp({ settings: loadSettings(environment) });
    return { app, close: () => app.close() };
  }

  it('needs an API key when WEIR_API_KEYS is set', async () => {
    const test = await createGuardedApp({ WEIR_API_KEYS: 'the-api-key' });
    try {
      expect((await test.app.inject({ url: '/metrics' })).statusCode).toBe(401);
      const keyed = await test.app.inject({
        url: '/metrics',
        headers: { authorization: 'Bearer the-api-key' },
      });
      expect(keyed.statusCode).toBe(200);
      expect(keyed.body).toContain('weir_messages_total');
    } finally {
      await test.close();
    }
  });

  it('a scraper token opens /metrics and nothing else, also on an API without keys', async () => {
    const environments: Array<Record<string, string>> = [
      { WEIR_API_KEYS: 'the-api-key', WEIR_METRICS_TOKENS: 'scraper-token' },
      { WEIR_METRICS_TOKENS: 'scraper-token' },
    ];
    for (const environment of environments) {
      const test = await createGuardedApp(environment);
      try {
        const scraper = { authorization: 'Bearer scraper-token' };
        expect((await test.app.inject({ url: '/metrics', headers: scraper })).statusCode).toBe(200);
        expect((await test.app.inject({ url: '/metrics' })).statusCode).toBe(401);
        expect(
          (await test.app.inject({ url: '/metrics', headers: { authorization: 'Bearer wrong' } })).statusCode,
        ).toBe(401);
        const data = await test.app.inject({ url: '/api/v1/configs', headers: scraper });
        expect(data.statusCode).toBe(environment.WEIR_API_KEYS ? 401 : 503); // 503: no database here, but past the guard
        if (environment.WEIR_API_KEYS) {
          const keyed = await test.app.inject({
            url: '/metrics',
            headers: { authorization: 'Bearer the-api-key' },
          });
          expect(keyed.statusCode).toBe(200);
        }
      } finally {
        await test.close();
      }
    }
  });

  it('WEIR_METRICS_PORT serves /metrics on its own listener (a worker has no API port), guarded the same way', async () => {
    const settings = loadSettings({ HOST: '127.0.0.1', WEIR_METRICS_TOKENS: 'scraper-token' });
    const server = await startMetricsServer(settings, 0);
    try {
      const { port } = server.server.address() as AddressInfo;
      const url = `http://127.0.0.1:${port}/metrics`;
      expect((await fetch(url)).status).toBe(401);
      const scraped = await fetch(url, { headers: { authorization: 'Bearer scraper-token' } });
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain('# TYPE weir_messages_total counter');
      // Nothing but /metrics is served there.
      expect(
        (
          await fetch(`http://127.0.0.1:${port}/api/v1/configs`, {
            headers: { authorization: 'Bearer scraper-token' },
          })
        ).status,
      ).toBe(404);
    } finally {
      await server.close();
    }
  });
});
