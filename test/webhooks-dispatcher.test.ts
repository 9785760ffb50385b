/**
 * The webhook dispatcher's deliveries, one attempt to the next: signatures, the retry schedule
 * and dead letters, timeouts, 4xx and network errors, the address policy at connect time, which
 * subscriptions an event matches, pausing, and pending rows across a restart.
 * webhooks-dispatcher-journal.test.ts has the journal, leases and concurrent dispatchers.
 */
import { describe, expect, it } from 'vitest';
import type { WeirEvent } from '../src/events/event-bus.js';
import { createAddressPolicy } from '../src/webhooks/address-policy.js';
import { createDispatcher } from '../src/webhooks/dispatcher.js';
import { createSender } from '../src/webhooks/sender.js';
import { databaseTargets } from './helpers/databases.js';
import { DispatcherHarness, executionEvent, HOUR, MINUTE } from './helpers/webhook-dispatcher-harness.js';
import { startWebhookReceiver } from './helpers/webhook-receiver.js';

function storageEvent(routeId: string, adapter: string): WeirEvent {
  return {
    type: 'storage.object_created',
    execution_id: 'e1',
    config_id: 'c1',
    route_id: routeId,
    adapter_name: adapter,
    key: `e1/${routeId}/a.json`,
    size: 2,
    content_type: 'application/json',
    timestamp: new Date().toISOString(),
  };
}

describe.each(databaseTargets())('webhook dispatcher on $name', (target) => {
  const harness = new DispatcherHarness(target);

  it('records a delivery when the event happens and sends it signed both ways', async () => {
    const subscription = await harness.subscribe();
    const dispatch = harness.dispatcher();
    harness.events.emit(executionEvent());
    await dispatch.flush();
    expect((await harness.onlyDelivery(subscription.webhook_id)).status).toBe('pending');

    expect(await dispatch.poll()).toBe(1);
    const [received] = await harness.receiver.waitFor(1);
    expect(received?.verificationError).toBeNull();
    expect(received?.headers['x-svc-event']).toBe('execution.started');
    const row = await harness.onlyDelivery(subscription.webhook_id);
    expect(received?.headers['x-svc-delivery']).toBe(row.delivery_id);
    expect(received?.headers['webhook-id']).toBe(row.delivery_id);
    expect(received?.json).toMatchObject({
      type: 'execution.started',
      data: { execution_id: 'e1', config_id: 'c1', status: 'running' },
      metadata: {},
    });
    expect(received?.json.id).toBe(row.event_id);
    expect(row).toMatchObject({
      status: 'delivered',
      attempts: 1,
      response_status: 200,
      next_attempt_at: null,
    });
    expect(row.response_snippet).toBe('answered 200');
    expect(await dispatch.poll()).toBe(0);
  });

  it('follows the whole 6.2 schedule with Retry-After, dead-letters after 6 attempts, and re-arms', async () => {
    const subscription = await harness.subscribe();
    const dispatch = harness.dispatcher({ timeoutMs: 300 });
    harness.receiver.script(
      { status: 500 },
      { status: 429, headers: { 'retry-after': '600' } },
      { hang: true },
      { status: 503, body: 'x'.repeat(5000) },
      { status: 408 },
      { status: 502 },
    );
    harness.events.emit(executionEvent());
    await dispatch.flush();
    const start = harness.clock.getTime();
    const expectations: Array<[waitMs: number, status: string]> = [
      [0, 'pending_retry'], // 500: retry after 1 min
      [MINUTE, 'pending_retry'], // 429, Retry-After 10 min > 5 min scheduled
      [10 * MINUTE, 'pending_retry'], // timeout: retry after 30 min
      [30 * MINUTE, 'pending_retry'], // 503: after 2 h
      [2 * HOUR, 'pending_retry'], // 408: after 12 h
      [12 * HOUR, 'dead_letter'], // 502 on the 6th attempt
    ];
    let elapsed = 0;
    for (const [index, [waitMs, status]] of expectations.entries()) {
      // One millisecond early, nothing is due.
      if (waitMs > 0) {
        harness.clock = new Date(start + elapsed + waitMs - 1);
        expect(await dispatch.poll()).toBe(0);
      }
      elapsed += waitMs;
      harness.clock = new Date(start + elapsed);
      expect(await dispatch.poll()).toBe(1);
      const row = await harness.onlyDelivery(subscription.webhook_id);
      expect(row.status).toBe(status);
      expect(row.attempts).toBe(index + 1);
    }
    const dead = await harness.onlyDelivery(subscription.webhook_id);
    expect(dead.next_attempt_at).toBeNull();
    expect(dead.response_status).toBe(502);
    harness.clock = new Date(start + 100 * HOUR);
    expect(await dispatch.poll()).toBe(0);
    expect(harness.receiver.deliveries.map((delivery) => delivery.answeredWith)).toEqual([
      500,
      429,
      'hang',
      503,
      408,
      502,
    ]);
    expect(harness.receiver.deliveries.every((delivery) => delivery.verified)).toBe(true);
    // One delivery id over all attempts: the receiver's idempotency key.
    expect(
      new Set(harness.receiver.deliveries.map((delivery) => delivery.headers['x-svc-delivery'])).size,
    ).toBe(1);

    const rearmed = await harness.repository.rearm(subscription.webhook_id, dead.delivery_id, harness.clock);
    expect(rearmed).toMatchObject({ status: 'pending', attempts: 0, manual_retries: 1 });
    expect(await dispatch.poll()).toBe(1);
    expect(await harness.onlyDelivery(subscription.webhook_id)).toMatchObject({
      status: 'delivered',
      attempts: 1,
      manual_retries: 1,
      response_status: 200,
    });
  });

  it('keeps the timeout and a truncated snippet on the record', async () => {
    const subscription = await harness.subscribe();
    const dispatch = harness.dispatcher({ timeoutMs: 300 });
    harness.receiver.script({ status: 503, body: 'y'.repeat(5000) }, { hang: true });
    harness.events.emit(executionEvent());
    await dispatch.flush();
    await dispatch.poll();
    const first = await harness.onlyDelivery(subscription.webhook_id);
    expect(first.response_snippet).toBe('y'.repeat(1024));
    expect(first.error).toBe('HTTP 503');
    expect(first.next_attempt_at?.getTime()).toBe(harness.clock.getTime() + MINUTE);
    harness.clock = new Date(harness.clock.getTime() + MINUTE);
    await dispatch.poll();
    const second = await harness.onlyDelivery(subscription.webhook_id);
    expect(second).toMatchObject({ status: 'pending_retry', attempts: 2, response_status: null });
    expect(second.error).toMatch(/no answer within 300 ms/);
    expect(second.next_attempt_at?.getTime()).toBe(harness.clock.getTime() + 5 * MINUTE);
  });

  it('fails a delivery for good on another 4xx', async () => {
    const subscription = await harness.subscribe();
    const dispatch = harness.dispatcher();
    harness.receiver.script({ status: 410 });
    harness.events.emit(executionEvent());
    await dispatch.flush();
    await dispatch.poll();
    expect(await harness.onlyDelivery(subscription.webhook_id)).toMatchObject({
      status: 'failed',
      attempts: 1,
      response_status: 410,
      next_attempt_at: null,
    });
    harness.clock = new Date(harness.clock.getTime() + 24 * HOUR);
    expect(await dispatch.poll()).toBe(0);
  });

  it('retries a network error (nothing listening)', async () => {
    const subscription = await harness.subscribe();
    const closed = harness.receiver.url;
    await harness.receiver.close();
    await harness.repository.updateSubscription(subscription.webhook_id, { url: closed }, harness.clock);
    const dispatch = harness.dispatcher();
    harness.events.emit(executionEvent());
    await dispatch.flush();
    await dispatch.poll();
    const row = await harness.onlyDelivery(subscription.webhook_id);
    expect(row).toMatchObject({ status: 'pending_retry', attempts: 1, response_status: null });
    expect(row.error).toMatch(/ECONNREFUSED/);
    harness.receiver = await startWebhookReceiver();
  });

  it('refuses a forbidden address at connect time (a name that now resolves to loopback)', async () => {
    const subscription = await harness.subscribe();
    await harness.repository.updateSubscription(
      subscription.webhook_id,
      { url: harness.receiver.url.replace('127.0.0.1', 'localhost') },
      harness.clock,
    );
    const strict = createDispatcher({
      repository: harness.repository,
      sender: createSender({ policy: createAddressPolicy([]), timeoutMs: 2000, maxSockets: 4 }),
      events: harness.events,
      now: () => harness.clock,
    });
    harness.dispatchers.push(strict);
    harness.events.emit(executionEvent());
    await strict.flush();
    await strict.poll();
    const row = await harness.onlyDelivery(subscription.webhook_id);
    expect(row.status).toBe('pending_retry');
    expect(row.error).toMatch(/refused.*WEIR_WEBHOOK_ALLOWED_CIDRS/);
    expect(harness.receiver.deliveries).toHaveLength(0);
  });

  it('matches event types and every given filter (AND); disabled subscriptions get nothing', async () => {
    const all = await harness.subscribe(['storage.object_created', 'execution.started']);
    const byRoute = await harness.subscribe(['storage.object_created'], { route_id: 'a', adapter_name: 'x' });
    const byConfig = await harness.subscribe(['storage.object_created', 'execution.started'], {
      config_id: 'c2',
    });
    const routeOnExecution = await harness.subscribe(['execution.started'], { route_id: 'a' });
    const disabled = await harness.subscribe(['storage.object_created'], {}, false);
    const dispatch = harness.dispatcher();
    harness.events.emit(storageEvent('a', 'x'));
    harness.events.emit(storageEvent('a', 'y'));
    harness.events.emit(storageEvent('b', 'x'));
    harness.events.emit(executionEvent('execution.started', 'c2'));
    harness.events.emit(executionEvent('execution.completed'));
    await dispatch.flush();
    const count = async (webhookId: string) =>
      (await harness.repository.listDeliveries(webhookId, { limit: 100, offset: 0 })).total;
    expect(await count(all.webhook_id)).toBe(4);
    expect(await count(byRoute.webhook_id)).toBe(1);
    expect(await count(byConfig.webhook_id)).toBe(1);
    expect(await count(routeOnExecution.webhook_id)).toBe(0);
    expect(await count(disabled.webhook_id)).toBe(0);
  });

  it('pauses deliveries of a disabled subscription and resumes them when enabled', async () => {
    const subscription = await harness.subscribe();
    const dispatch = harness.dispatcher();
    harness.events.emit(executionEvent());
    await dispatch.flush();
    await harness.repository.setEnabled(subscription.webhook_id, false, harness.clock);
    expect(await dispatch.poll()).toBe(0);
    const parked = await harness.onlyDelivery(subscription.webhook_id);
    expect(parked).toMatchObject({ status: 'pending', next_attempt_at: null });
    // A manual retry of a disabled subscription's delivery stays parked too.
    await harness.repository.rearm(subscription.webhook_id, parked.delivery_id, harness.clock);
    harness.clock = new Date(harness.clock.getTime() + HOUR);
    expect(await dispatch.poll()).toBe(0);
    await harness.repository.setEnabled(subscription.webhook_id, true, harness.clock);
    expect(await dispatch.poll()).toBe(1);
    expect(await harness.onlyDelivery(subscription.webhook_id)).toMatchObject({ status: 'delivered' });
  });

  it('keeps pending deliveries across a restart', async () => {
    const subscription = await harness.subscribe();
    const first = harness.dispatcher();
    for (let index = 0; index < 5; index++) harness.events.emit(executionEvent());
    await first.stop();
    const second = harness.dispatcher({ withEvents: false });
    expect(await second.poll()).toBe(5);
    await harness.receiver.waitFor(5);
    const { rows } = await harness.repository.listDeliveries(subscription.webhook_id, {
      limit: 10,
      offset: 0,
    });
    expect(rows.map((row) => row.status)).toEqual(Array(5).fill('delivered'));
  });
});
