import { Type } from 'typebox';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defineAdapter } from '../src/adapters/adapter.js';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { databaseTargets } from './helpers/databases.js';
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.js';

const writer = defineAdapter({
  type: 'webhook_writer',
  group: 'synthetic',
  summary: 'writes each input as a stage output object',
  config: Type.Object({}),
  input: Type.Object({}),
  output: Type.Object({}),
  create: () => async (payload, context) => {
    const info = await context.writeObject(`item-${payload.index as number}.json`, JSON.stringify(payload), {
      contentType: 'application/json',
    });
    return [{ payload: { storage_key: info.key } }];
  },
});

const failing = defineAdapter({
  type: 'webhook_failing',
  group: 'synthetic',
  summary: 'always fails',
  config: Type.Object({}),
  input: Type.Object({}),
  output: Type.Object({}),
  create: () => async () => {
    throw new Error('broken on purpose');
  },
});

const unstartable = defineAdapter({
  type: 'webhook_unstartable',
  group: 'synthetic',
  summary: 'cannot be created',
  config: Type.Object({}),
  input: Type.Object({}),
  output: Type.Object({}),
  create: () => {
    throw new Error('no model file');
  },
});

const SECRET = 'receiver-secret-0123456789';

describe.each(databaseTargets())('webhooks API on $name', (target) => {
  let testApp: TestApp;
  let strictApp: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    const registry = createBuiltinRegistry();
    registry.register(writer);
    registry.register(failing);
    registry.register(unstartable);
    testApp = await createTestApp(target, {
      registry,
      environment: { WEIR_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8, ::1/128' },
    });
    strictApp = await createTestApp(target);
  });
  afterAll(async () => {
    await testApp?.close();
    await strictApp?.close();
  });
  afterEach(async () => {
    await receiver?.close();
  });

  async function register(body: Record<string, unknown>, app = testApp) {
    return app.app.inject({ method: 'POST', url: '/api/v1/webhooks', payload: body });
  }

  async function registerReceiver(eventTypes: string[], filters?: Record<string, string>) {
    receiver = await startWebhookReceiver(SECRET);
    const response = await register({
      url: receiver.url,
      event_types: eventTypes,
      secret: SECRET,
      ...(filters ? { filters } : {}),
    });
    expect(response.statusCode).toBe(201);
    return response.json().webhook_id as string;
  }

  async function deliveries(webhookId: string, query = '') {
    const response = await testApp.app.inject({ url: `/api/v1/webhooks/${webhookId}/deliveries${query}` });
    expect(response.statusCode).toBe(200);
    return response.json();
  }

  async function eventually<T>(probe: () => Promise<T>, accept: (value: T) => boolean): Promise<T> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const value = await probe();
      if (accept(value)) return value;
      if (Date.now() > deadline) throw new Error(`condition not met: ${JSON.stringify(value)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it.each([
    ['http://127.0.0.1:9/hook', 'webhook_target_refused'],
    ['http://10.1.2.3/hook', 'webhook_target_refused'],
    ['http://169.254.169.254/latest/meta-data', 'webhook_target_refused'],
    ['http://[::1]:8080/hook', 'webhook_target_refused'],
    ['http://[::ffff:127.0.0.1]/hook', 'webhook_target_refused'],
    ['http://localhost:8080/hook', 'webhook_target_refused'],
    // issue 17: IPv4-compatible loopback, local-use NAT64 of loopback, discard-only, documentation
    ['http://[::127.0.0.1]/hook', 'webhook_target_refused'],
    ['http://[64:ff9b:1::7f00:1]/hook', 'webhook_target_refused'],
    ['http://[100::1]/hook', 'webhook_target_refused'],
    ['http://[2001:db8::1]/hook', 'webhook_target_refused'],
    ['ftp://example.com/hook', 'webhook_url_invalid'],
    ['not a url', 'webhook_url_invalid'],
    ['http://no-such-host.invalid/hook', 'webhook_url_invalid'],
  ])('refuses %s on registration without an allow-list (%s)', async (url, code) => {
    const response = await register({ url, event_types: ['execution.started'], secret: SECRET }, strictApp);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code });
    expect(typeof response.json().detail).toBe('string');
  });

  it.each([
    [{ url: 'http://127.0.0.1/h', event_types: [], secret: SECRET }, 'event_types'],
    [{ url: 'http://127.0.0.1/h', event_types: ['execution.exploded'], secret: SECRET }, 'event_types'],
    [{ url: 'http://127.0.0.1/h', event_types: ['lineage.failed'], secret: 'short' }, 'secret'],
    [{ url: 'http://127.0.0.1/h', event_types: ['lineage.failed'] }, 'secret'],
    [
      { url: 'http://127.0.0.1/h', event_types: ['lineage.failed'], secret: SECRET, filters: { stage: 'x' } },
      'filters',
    ],
  ])('answers 422 for a malformed registration (%#)', async (body, field) => {
    const response = await register(body);
    expect(response.statusCode).toBe(422);
    expect(JSON.stringify(response.json().detail)).toContain(field);
  });

  it('registers, lists, updates, toggles and deletes, never returning the secret', async () => {
    receiver = await startWebhookReceiver(SECRET);
    const created = await register({
      url: receiver.url,
      event_types: ['execution.completed', 'lineage.failed'],
      secret: SECRET,
      filters: { config_id: 'c1' },
    });
    expect(created.statusCode).toBe(201);
    const webhook = created.json();
    expect(webhook).toMatchObject({
      url: receiver.url,
      event_types: ['execution.completed', 'lineage.failed'],
      filters: { config_id: 'c1' },
      enabled: true,
      secret_hint: '****6789',
    });
    expect(webhook.webhook_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.body).not.toContain(SECRET);

    const list = await testApp.app.inject({ url: '/api/v1/webhooks?limit=1000' });
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain(SECRET);
    expect(list.json().webhooks.map((entry: { webhook_id: string }) => entry.webhook_id)).toContain(
      webhook.webhook_id,
    );

    const path = `/api/v1/webhooks/${webhook.webhook_id}`;
    const patched = await testApp.app.inject({
      method: 'PATCH',
      url: path,
      payload: {
        event_types: ['storage.object_created'],
        filters: { route_id: 'r' },
        secret: 'another-secret-abcd',
      },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({
      event_types: ['storage.object_created'],
      filters: { route_id: 'r' },
      secret_hint: '****abcd',
      url: receiver.url,
    });
    const refused = await testApp.app.inject({
      method: 'PATCH',
      url: path,
      payload: { url: 'http://192.168.1.1/hook' },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().code).toBe('webhook_target_refused');
    // The allow-list (127.0.0.0/8) opens 127.0.0.1, not IPv6 forms that embed it.
    for (const url of ['http://[::127.0.0.1]/hook', 'http://[64:ff9b:1::7f00:1]/hook']) {
      const embedded = await testApp.app.inject({ method: 'PATCH', url: path, payload: { url } });
      expect(embedded.statusCode).toBe(400);
      expect(embedded.json().code).toBe('webhook_target_refused');
    }
    const empty = await testApp.app.inject({ method: 'PATCH', url: path, payload: {} });
    expect(empty.statusCode).toBe(422);

    const flipped = await testApp.app.inject({ method: 'POST', url: `${path}/toggle` });
    expect(flipped.statusCode).toBe(200);
    expect(flipped.json().enabled).toBe(false);
    const set = await testApp.app.inject({
      method: 'POST',
      url: `${path}/toggle`,
      payload: { enabled: false },
    });
    expect(set.json().enabled).toBe(false);
    const back = await testApp.app.inject({
      method: 'POST',
      url: `${path}/toggle`,
      payload: { enabled: true },
    });
    expect(back.json().enabled).toBe(true);

    expect((await testApp.app.inject({ method: 'DELETE', url: path })).statusCode).toBe(204);
    expect((await testApp.app.inject({ method: 'DELETE', url: path })).statusCode).toBe(404);
    const gone = await testApp.app.inject({ url: `${path}/deliveries` });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().code).toBe('webhook_not_found');
    const missing = await testApp.app.inject({ method: 'PATCH', url: path, payload: { url: receiver.url } });
    expect(missing.statusCode).toBe(404);
  });

  it('resolves target names through the injected resolver, on registration and on delivery (no lookup leaves the machine)', async () => {
    const asked: string[] = [];
    const named = await createTestApp(target, {
      environment: { WEIR_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8' },
      resolveHost: async (hostname) => {
        asked.push(hostname);
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    try {
      receiver = await startWebhookReceiver(SECRET);
      const url = receiver.url.replace('127.0.0.1', 'receiver.test');
      const created = await register({ url, event_types: ['execution.started'], secret: SECRET }, named);
      expect(created.statusCode).toBe(201);
      expect(asked).toEqual(['receiver.test']);
      const sent = await named.app.inject({
        method: 'POST',
        url: `/api/v1/webhooks/${created.json().webhook_id}/test`,
      });
      expect(sent.json()).toMatchObject({ success: true, response_status: 200 });
      expect(asked).toEqual(['receiver.test', 'receiver.test']);
    } finally {
      await named.close();
    }
  });

  it('test sends a synthetic event of the real shape with __test__ and reports the answer', async () => {
    const webhookId = await registerReceiver(['storage.object_created', 'execution.started'], {
      route_id: 'articles',
    });
    const ok = await testApp.app.inject({ method: 'POST', url: `/api/v1/webhooks/${webhookId}/test` });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({
      success: true,
      response_status: 200,
      response_body: 'answered 200',
      error_message: null,
    });
    expect(ok.json().duration_ms).toBeGreaterThan(0);
    const [delivery] = await receiver.waitFor(1);
    expect(delivery?.verificationError).toBeNull();
    expect(delivery?.headers['x-svc-event']).toBe('storage.object_created');
    expect(delivery?.json).toMatchObject({
      type: 'storage.object_created',
      metadata: { __test__: true },
      data: { route_id: 'articles', content_type: 'application/json' },
    });
    expect(Object.keys(delivery?.json ?? {}).sort()).toEqual([
      'created_at',
      'data',
      'id',
      'metadata',
      'type',
    ]);

    receiver.script({ status: 500, body: 'down' });
    const failed = await testApp.app.inject({ method: 'POST', url: `/api/v1/webhooks/${webhookId}/test` });
    expect(failed.statusCode).toBe(200);
    expect(failed.json()).toMatchObject({
      success: false,
      response_status: 500,
      response_body: 'down',
      error_message: 'HTTP 500',
    });
    // Test events are not recorded as deliveries.
    expect((await deliveries(webhookId)).total).toBe(0);

    const unknown = await testApp.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks/0190a000-0000-7000-8000-000000000000/test',
    });
    expect(unknown.statusCode).toBe(404);
    const bad = await testApp.app.inject({ method: 'POST', url: '/api/v1/webhooks/not-a-uuid/test' });
    expect(bad.statusCode).toBe(422);
  });

  it('test reports a network error when nothing listens', async () => {
    const webhookId = await registerReceiver(['execution.started']);
    await receiver.close();
    const response = await testApp.app.inject({ method: 'POST', url: `/api/v1/webhooks/${webhookId}/test` });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ success: false, response_status: null, response_body: null });
    expect(response.json().error_message).toMatch(/ECONNREFUSED/);
  });

  it('delivers execution.started/completed and storage.object_created of a real run, lists and retries', async () => {
    const configs = await testApp.app.inject({
      method: 'POST',
      url: '/api/v1/configs',
      payload: {
        config_yaml: `routes:
  - id: write
    adapters:
      - type: synthetic_fanout
        config: { count: 3 }
      - type: webhook_writer
      - type: synthetic_sink
`,
      },
    });
    expect(configs.statusCode).toBe(201);
    const configId = configs.json().id as string;
    const webhookId = await registerReceiver(
      ['execution.started', 'execution.completed', 'storage.object_created'],
      { config_id: configId },
    );
    const run = await testApp.app.inject({ method: 'POST', url: `/api/v1/configs/${configId}/run` });
    expect(run.statusCode).toBe(201);
    const executionId = run.json().id as string;
    await receiver.waitFor(5);
    const received = receiver.deliveries;
    expect(received.every((delivery) => delivery.verified)).toBe(true);
    expect(received.map((delivery) => delivery.json.type).sort()).toEqual([
      'execution.completed',
      'execution.started',
      'storage.object_created',
      'storage.object_created',
      'storage.object_created',
    ]);
    const stored = received.filter((delivery) => delivery.json.type === 'storage.object_created');
    expect(stored[0]?.json.data).toMatchObject({
      execution_id: executionId,
      config_id: configId,
      route_id: 'write',
      adapter_name: 'webhook_writer',
      content_type: 'application/json',
    });
    expect(String(stored[0]?.json.data.key)).toMatch(
      new RegExp(`^${executionId}/webhook_writer/item-\\d\\.json$`),
    );
    const completed = received.find((delivery) => delivery.json.type === 'execution.completed');
    expect(completed?.json.data).toMatchObject({ execution_id: executionId, status: 'completed' });
    expect(completed?.headers['x-svc-event']).toBe('execution.completed');

    const listed = await eventually(
      () => deliveries(webhookId, '?status=delivered'),
      (page) => page.total === 5,
    );
    expect(listed.deliveries[0]).toMatchObject({
      webhook_id: webhookId,
      status: 'delivered',
      response_code: 200,
      response_body_snippet: 'answered 200',
      retry_count: 0,
      attempts: 1,
      next_retry_at: null,
    });
    expect((await deliveries(webhookId, '?status=dead_letter')).total).toBe(0);
    expect(
      (await testApp.app.inject({ url: `/api/v1/webhooks/${webhookId}/deliveries?status=lost` })).statusCode,
    ).toBe(422);

    const first = listed.deliveries[0];
    const retried = await testApp.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/${webhookId}/deliveries/${first.delivery_id}/retry`,
    });
    expect(retried.statusCode).toBe(200);
    expect(retried.json()).toMatchObject({ status: 'pending', attempts: 0, manual_retries: 1 });
    await receiver.waitFor(6);
    expect(receiver.deliveries[5]?.headers['x-svc-delivery']).toBe(first.delivery_id);
    await eventually(
      () => deliveries(webhookId, '?status=delivered'),
      (page) => page.total === 5,
    );
    const unknown = await testApp.app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/${webhookId}/deliveries/0190a000-0000-7000-8000-000000000000/retry`,
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('webhook_delivery_not_found');
  });

  it('delivers lineage.failed and records a terminal 4xx as failed', async () => {
    const configs = await testApp.app.inject({
      method: 'POST',
      url: '/api/v1/configs',
      payload: {
        config_yaml: `routes:
  - id: breaks
    adapters:
      - type: synthetic_fanout
        config: { count: 1 }
      - type: webhook_failing
        retry: { max_attempts: 1 }
`,
      },
    });
    const configId = configs.json().id as string;
    const webhookId = await registerReceiver(['lineage.failed'], { adapter_name: 'webhook_failing' });
    receiver.script({ status: 410, body: 'gone' });
    const run = await testApp.app.inject({ method: 'POST', url: `/api/v1/configs/${configId}/run` });
    expect(run.statusCode).toBe(201);
    const [delivery] = await receiver.waitFor(1);
    expect(delivery?.verified).toBe(true);
    expect(delivery?.json).toMatchObject({
      type: 'lineage.failed',
      data: { config_id: configId, route_id: 'breaks', adapter_name: 'webhook_failing' },
    });
    expect(String(delivery?.json.data.error)).toContain('broken on purpose');
    const failed = await eventually(
      () => deliveries(webhookId, '?status=failed'),
      (page) => page.total === 1,
    );
    expect(failed.deliveries[0]).toMatchObject({
      response_code: 410,
      response_body_snippet: 'gone',
      error: 'HTTP 410',
      next_retry_at: null,
    });
  });
  it('delivers execution.cancelled and execution.failed; an execution_id filter picks one execution', async () => {
    const create = async (config_yaml: string) =>
      (await testApp.app.inject({ method: 'POST', url: '/api/v1/configs', payload: { config_yaml } })).json()
        .id as string;
    const waits = await create('routes:\n  - id: waits\n    adapters: [{ type: synthetic_sink }]\n');
    const broken = await create('routes:\n  - id: broken\n    adapters: [{ type: webhook_unstartable }]\n');
    const start = async (configId: string, query = '') =>
      (await testApp.app.inject({ method: 'POST', url: `/api/v1/configs/${configId}/run${query}` })).json()
        .id as string;
    // Started without their message: running until cancelled.
    const watched = await start(waits, '?skip_init_message=true');
    const other = await start(waits, '?skip_init_message=true');
    await registerReceiver(['execution.cancelled'], { execution_id: watched });
    const second = await register({
      url: receiver.url,
      event_types: ['execution.failed'],
      secret: SECRET,
      filters: { config_id: broken },
    });
    expect(second.statusCode).toBe(201);
    for (const id of [other, watched]) {
      const cancelled = await testApp.app.inject({ method: 'POST', url: `/api/v1/executions/${id}/cancel` });
      expect(cancelled.json().status).toBe('cancelled');
    }
    const failed = await start(broken);
    await receiver.waitFor(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const received = receiver.deliveries;
    expect(received.every((delivery) => delivery.verified)).toBe(true);
    expect(received.map((delivery) => [delivery.json.type, delivery.json.data.execution_id]).sort()).toEqual([
      ['execution.cancelled', watched],
      ['execution.failed', failed],
    ]);
    const failure = received.find((delivery) => delivery.json.type === 'execution.failed');
    expect(failure?.json.data).toMatchObject({ status: 'failed', error: 'cannot start: no model file' });
  });
});
