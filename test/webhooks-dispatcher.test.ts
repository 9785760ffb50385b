import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import { createWebhooksRepository, type WebhooksRepository } from '../src/db/webhooks-repository.js';
import { createEventBus, type EventBus, type WeirEvent } from '../src/events/event-bus.js';
import { createAddressPolicy } from '../src/webhooks/address-policy.js';
import { createDispatcher, type Dispatcher } from '../src/webhooks/dispatcher.js';
import { createSender, type Sender } from '../src/webhooks/sender.js';
import { createSigner, type Signer } from '../src/webhooks/signer.js';
import { databaseTargets } from './helpers/databases.js';
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const loopback = createAddressPolicy(['127.0.0.0/8']);

function executionEvent(type: WeirEvent['type'] = 'execution.started', configId = 'c1'): WeirEvent {
  return {
    type: type as 'execution.started',
    execution_id: 'e1',
    config_id: configId,
    status: 'running',
    timestamp: new Date().toISOString(),
  };
}

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
  let database: Database;
  let repository: WebhooksRepository;
  let receiver: WebhookReceiver;
  let events: EventBus;
  let clock: Date;
  const dispatchers: Dispatcher[] = [];

  function dispatcher(
    options: {
      timeoutMs?: number;
      concurrency?: number;
      withEvents?: boolean;
      repository?: WebhooksRepository;
      onError?: (error: unknown, message: string) => void;
    } = {},
  ) {
    const created = createDispatcher({
      repository: options.repository ?? repository,
      sender: createSender({ policy: loopback, timeoutMs: options.timeoutMs ?? 2000, maxSockets: 16 }),
      events: options.withEvents === false ? undefined : events,
      now: () => clock,
      timeoutMs: options.timeoutMs ?? 2000,
      ...(options.concurrency ? { concurrency: options.concurrency } : {}),
      onError:
        options.onError ??
        ((error) => {
          throw error;
        }),
    });
    dispatchers.push(created);
    return created;
  }

  async function subscribe(
    eventTypes: string[] = ['execution.started'],
    filters: Record<string, string> = {},
    enabled = true,
  ) {
    return repository.createSubscription({
      webhook_id: crypto.randomUUID(),
      url: receiver.url,
      secret: receiver.secret,
      event_types: eventTypes,
      filters,
      enabled,
      now: clock,
    });
  }

  async function onlyDelivery(webhookId: string) {
    const { rows } = await repository.listDeliveries(webhookId, { limit: 10, offset: 0 });
    expect(rows).toHaveLength(1);
    return rows[0] as NonNullable<(typeof rows)[0]>;
  }

  beforeEach(async () => {
    database = await target.open();
    repository = createWebhooksRepository(database.db);
    receiver = await startWebhookReceiver();
    events = createEventBus((error) => {
      throw error;
    });
    clock = new Date('2030-01-01T00:00:00Z');
  });

  afterEach(async () => {
    for (const created of dispatchers.splice(0)) await created.stop();
    await receiver.close();
    await database.close();
  });

  it('records a delivery when the event happens and sends it signed both ways', async () => {
    const subscription = await subscribe();
    const dispatch = dispatcher();
    events.emit(executionEvent());
    await dispatch.flush();
    expect((await onlyDelivery(subscription.webhook_id)).status).toBe('pending');

    expect(await dispatch.poll()).toBe(1);
    const [received] = await receiver.waitFor(1);
    expect(received?.verificationError).toBeNull();
    expect(received?.headers['x-svc-event']).toBe('execution.started');
    const row = await onlyDelivery(subscription.webhook_id);
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
    const subscription = await subscribe();
    const dispatch = dispatcher({ timeoutMs: 300 });
    receiver.script(
      { status: 500 },
      { status: 429, headers: { 'retry-after': '600' } },
      { hang: true },
      { status: 503, body: 'x'.repeat(5000) },
      { status: 408 },
      { status: 502 },
    );
    events.emit(executionEvent());
    await dispatch.flush();
    const start = clock.getTime();
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
        clock = new Date(start + elapsed + waitMs - 1);
        expect(await dispatch.poll()).toBe(0);
      }
      elapsed += waitMs;
      clock = new Date(start + elapsed);
      expect(await dispatch.poll()).toBe(1);
      const row = await onlyDelivery(subscription.webhook_id);
      expect(row.status).toBe(status);
      expect(row.attempts).toBe(index + 1);
    }
    const dead = await onlyDelivery(subscription.webhook_id);
    expect(dead.next_attempt_at).toBeNull();
    expect(dead.response_status).toBe(502);
    clock = new Date(start + 100 * HOUR);
    expect(await dispatch.poll()).toBe(0);
    expect(receiver.deliveries.map((delivery) => delivery.answeredWith)).toEqual([
      500,
      429,
      'hang',
      503,
      408,
      502,
    ]);
    expect(receiver.deliveries.every((delivery) => delivery.verified)).toBe(true);
    // One delivery id over all attempts: the receiver's idempotency key.
    expect(new Set(receiver.deliveries.map((delivery) => delivery.headers['x-svc-delivery'])).size).toBe(1);

    const rearmed = await repository.rearm(subscription.webhook_id, dead.delivery_id, clock);
    expect(rearmed).toMatchObject({ status: 'pending', attempts: 0, manual_retries: 1 });
    expect(await dispatch.poll()).toBe(1);
    expect(await onlyDelivery(subscription.webhook_id)).toMatchObject({
      status: 'delivered',
      attempts: 1,
      manual_retries: 1,
      response_status: 200,
    });
  });

  it('keeps the timeout and a truncated snippet on the record', async () => {
    const subscription = await subscribe();
    const dispatch = dispatcher({ timeoutMs: 300 });
    receiver.script({ status: 503, body: 'y'.repeat(5000) }, { hang: true });
    events.emit(executionEvent());
    await dispatch.flush();
    await dispatch.poll();
    const first = await onlyDelivery(subscription.webhook_id);
    expect(first.response_snippet).toBe('y'.repeat(1024));
    expect(first.error).toBe('HTTP 503');
    expect(first.next_attempt_at?.getTime()).toBe(clock.getTime() + MINUTE);
    clock = new Date(clock.getTime() + MINUTE);
    await dispatch.poll();
    const second = await onlyDelivery(subscription.webhook_id);
    expect(second).toMatchObject({ status: 'pending_retry', attempts: 2, response_status: null });
    expect(second.error).toMatch(/no answer within 300 ms/);
    expect(second.next_attempt_at?.getTime()).toBe(clock.getTime() + 5 * MINUTE);
  });

  it('fails a delivery for good on another 4xx', async () => {
    const subscription = await subscribe();
    const dispatch = dispatcher();
    receiver.script({ status: 410 });
    events.emit(executionEvent());
    await dispatch.flush();
    await dispatch.poll();
    expect(await onlyDelivery(subscription.webhook_id)).toMatchObject({
      status: 'failed',
      attempts: 1,
      response_status: 410,
      next_attempt_at: null,
    });
    clock = new Date(clock.getTime() + 24 * HOUR);
    expect(await dispatch.poll()).toBe(0);
  });

  it('retries a network error (nothing listening)', async () => {
    const subscription = await subscribe();
    const closed = receiver.url;
    await receiver.close();
    await repository.updateSubscription(subscription.webhook_id, { url: closed }, clock);
    const dispatch = dispatcher();
    events.emit(executionEvent());
    await dispatch.flush();
    await dispatch.poll();
    const row = await onlyDelivery(subscription.webhook_id);
    expect(row).toMatchObject({ status: 'pending_retry', attempts: 1, response_status: null });
    expect(row.error).toMatch(/ECONNREFUSED/);
    receiver = await startWebhookReceiver();
  });

  it('refuses a forbidden address at connect time (a name that now resolves to loopback)', async () => {
    const subscription = await subscribe();
    await repository.updateSubscription(
      subscription.webhook_id,
      { url: receiver.url.replace('127.0.0.1', 'localhost') },
      clock,
    );
    const strict = createDispatcher({
      repository,
      sender: createSender({ policy: createAddressPolicy([]), timeoutMs: 2000, maxSockets: 4 }),
      events,
      now: () => clock,
    });
    dispatchers.push(strict);
    events.emit(executionEvent());
    await strict.flush();
    await strict.poll();
    const row = await onlyDelivery(subscription.webhook_id);
    expect(row.status).toBe('pending_retry');
    expect(row.error).toMatch(/refused.*WEIR_WEBHOOK_ALLOWED_CIDRS/);
    expect(receiver.deliveries).toHaveLength(0);
  });

  it('matches event types and every given filter (AND); disabled subscriptions get nothing', async () => {
    const all = await subscribe(['storage.object_created', 'execution.started']);
    const byRoute = await subscribe(['storage.object_created'], { route_id: 'a', adapter_name: 'x' });
    const byConfig = await subscribe(['storage.object_created', 'execution.started'], { config_id: 'c2' });
    const routeOnExecution = await subscribe(['execution.started'], { route_id: 'a' });
    const disabled = await subscribe(['storage.object_created'], {}, false);
    const dispatch = dispatcher();
    events.emit(storageEvent('a', 'x'));
    events.emit(storageEvent('a', 'y'));
    events.emit(storageEvent('b', 'x'));
    events.emit(executionEvent('execution.started', 'c2'));
    events.emit(executionEvent('execution.completed'));
    await dispatch.flush();
    const count = async (webhookId: string) =>
      (await repository.listDeliveries(webhookId, { limit: 100, offset: 0 })).total;
    expect(await count(all.webhook_id)).toBe(4);
    expect(await count(byRoute.webhook_id)).toBe(1);
    expect(await count(byConfig.webhook_id)).toBe(1);
    expect(await count(routeOnExecution.webhook_id)).toBe(0);
    expect(await count(disabled.webhook_id)).toBe(0);
  });

  it('pauses deliveries of a disabled subscription and resumes them when enabled', async () => {
    const subscription = await subscribe();
    const dispatch = dispatcher();
    events.emit(executionEvent());
    await dispatch.flush();
    await repository.setEnabled(subscription.webhook_id, false, clock);
    expect(await dispatch.poll()).toBe(0);
    const parked = await onlyDelivery(subscription.webhook_id);
    expect(parked).toMatchObject({ status: 'pending', next_attempt_at: null });
    // A manual retry of a disabled subscription's delivery stays parked too.
    await repository.rearm(subscription.webhook_id, parked.delivery_id, clock);
    clock = new Date(clock.getTime() + HOUR);
    expect(await dispatch.poll()).toBe(0);
    await repository.setEnabled(subscription.webhook_id, true, clock);
    expect(await dispatch.poll()).toBe(1);
    expect(await onlyDelivery(subscription.webhook_id)).toMatchObject({ status: 'delivered' });
  });

  it('keeps pending deliveries across a restart', async () => {
    const subscription = await subscribe();
    const first = dispatcher();
    for (let index = 0; index < 5; index++) events.emit(executionEvent());
    await first.stop();
    const second = dispatcher({ withEvents: false });
    expect(await second.poll()).toBe(5);
    await receiver.waitFor(5);
    const { rows } = await repository.listDeliveries(subscription.webhook_id, { limit: 10, offset: 0 });
    expect(rows.map((row) => row.status)).toEqual(Array(5).fill('delivered'));
  });

  /** A started dispatcher over a repository that counts the rows it claims. */
  function liveDispatcher(concurrency: number) {
    const counter = { claimed: 0 };
    const counting: WebhooksRepository = {
      ...repository,
      async claimDue(options) {
        const rows = await repository.claimDue(options);
        counter.claimed += rows.length;
        return rows;
      },
    };
    const live = createDispatcher({
      repository: counting,
      sender: createSender({ policy: loopback, timeoutMs: 2000, maxSockets: 8 }),
      events,
      now: () => clock,
      timeoutMs: 2000,
      concurrency,
    });
    dispatchers.push(live);
    live.start();
    return { live, counter };
  }

  it('sends the deliveries of events it records itself without claiming them', async () => {
    const subscription = await subscribe();
    const { live, counter } = liveDispatcher(4);
    // A dispatcher that only claims, polling meanwhile, never gets a row leased to the other.
    const other = dispatcher({ withEvents: false });
    for (let index = 0; index < 20; index++) events.emit(executionEvent());
    await live.flush();
    expect(await other.poll()).toBe(0);
    await receiver.waitFor(20);
    await live.stop();
    expect(counter.claimed).toBe(0);
    const ids = receiver.deliveries.map((delivery) => delivery.headers['x-svc-delivery']);
    expect(new Set(ids).size).toBe(20);
    const { rows } = await repository.listDeliveries(subscription.webhook_id, { limit: 50, offset: 0 });
    expect(rows.map((row) => row.status)).toEqual(Array(20).fill('delivered'));
    expect(rows.every((row) => row.claim_token === null)).toBe(true);
    // Every journal row went once its deliveries had their rows.
    expect(await database.db.selectFrom('webhook_delivery_journal').selectAll().execute()).toEqual([]);
  });

  it('signs a big batch ahead on the signing thread, and receivers verify those signatures', async () => {
    await subscribe();
    const signer = createSigner((error) => {
      throw error;
    });
    let signedAhead: Promise<unknown> = Promise.resolve();
    const watching: Signer = {
      sign(deliveries, seconds) {
        const signing = signer.sign(deliveries, seconds);
        signedAhead = signing;
        return signing;
      },
      close: () => signer.close(),
    };
    // One slot; the first attempt waits for the batch's signatures, so the rest go out with them.
    const real = createSender({ policy: loopback, timeoutMs: 2000, maxSockets: 1 });
    let first = true;
    const presigned: boolean[] = [];
    const sender: Sender = {
      async send(request) {
        if (first) {
          first = false;
          await signedAhead;
          await new Promise((resolve) => setImmediate(resolve));
        }
        presigned.push(request.signed !== undefined);
        return real.send(request);
      },
      close: () => real.close(),
    };
    const live = createDispatcher({
      repository,
      sender,
      signer: watching,
      events,
      now: () => clock,
      timeoutMs: 2000,
      concurrency: 1,
    });
    dispatchers.push(live);
    live.start();
    for (let index = 0; index < 40; index++) events.emit(executionEvent());
    await receiver.waitFor(40);
    await live.stop();
    expect(presigned.filter(Boolean).length).toBeGreaterThanOrEqual(38);
    expect(receiver.deliveries.every((delivery) => delivery.verified)).toBe(true);
  });

  /**
   * A started dispatcher whose attempts never end until `release()`: it stands for one that
   * journalled deliveries, sent them, and died before any answer.
   */
  function stalledDispatcher() {
    const waiting: Array<() => void> = [];
    const errors: string[] = [];
    const stalled = createDispatcher({
      repository,
      sender: {
        send: () =>
          new Promise((resolve) =>
            waiting.push(() =>
              resolve({ outcome: { kind: 'network_error' }, snippet: null, error: 'gone', durationMs: 0 }),
            ),
          ),
        close() {},
      },
      events,
      now: () => clock,
      timeoutMs: 2000,
      concurrency: 4,
      onError: (_error, message) => errors.push(message),
    });
    stalled.start();
    return {
      stalled,
      sent: () => waiting.length,
      /** Answers its attempts (network errors) and stops it; its writes must all have worked. */
      async release() {
        for (const answer of waiting.splice(0)) answer();
        await stalled.stop();
        expect(errors).toEqual([]);
      },
    };
  }

  it('turns the journal of a dispatcher that died into pending rows once its lease runs out', async () => {
    const subscription = await subscribe();
    const { stalled, sent, release } = stalledDispatcher();
    for (let index = 0; index < 3; index++) events.emit(executionEvent());
    await stalled.flush();
    await expect.poll(sent).toBe(3);
    // Journalled, not yet rows: listed as pending all the same.
    const listed = await repository.listDeliveries(subscription.webhook_id, { limit: 10, offset: 0 });
    expect(listed.total).toBe(3);
    expect(listed.rows.map((row) => [row.status, row.attempts])).toEqual(Array(3).fill(['pending', 0]));
    expect(await database.db.selectFrom('webhook_deliveries').selectAll().execute()).toEqual([]);
    const survivor = dispatcher({ withEvents: false });
    expect(await survivor.poll()).toBe(0);
    // The lease (attempt timeout + 60 s) runs out: any dispatcher turns the journal into rows.
    clock = new Date(clock.getTime() + 2000 + MINUTE + 1);
    expect(await survivor.poll()).toBe(3);
    await receiver.waitFor(3);
    expect(new Set(receiver.deliveries.map((delivery) => delivery.headers['x-svc-delivery']))).toEqual(
      new Set(listed.rows.map((row) => row.delivery_id)),
    );
    // The dead dispatcher's late answers change nothing.
    await release();
    const { rows } = await repository.listDeliveries(subscription.webhook_id, { limit: 10, offset: 0 });
    expect(rows.map((row) => [row.status, row.attempts])).toEqual(Array(3).fill(['delivered', 1]));
    expect(await database.db.selectFrom('webhook_delivery_journal').selectAll().execute()).toEqual([]);
  });

  it('re-arms a delivery that is still only in the journal', async () => {
    const subscription = await subscribe();
    const { stalled, sent, release } = stalledDispatcher();
    events.emit(executionEvent());
    await stalled.flush();
    await expect.poll(sent).toBe(1);
    const journalled = await onlyDelivery(subscription.webhook_id);
    const rearmed = await repository.rearm(subscription.webhook_id, journalled.delivery_id, clock);
    expect(rearmed).toMatchObject({ status: 'pending', attempts: 0, manual_retries: 1, claim_token: null });
    expect(await dispatcher({ withEvents: false }).poll()).toBe(1);
    await receiver.waitFor(1);
    // The stalled attempt's result comes last and does not overwrite the re-armed row's.
    await release();
    expect(await onlyDelivery(subscription.webhook_id)).toMatchObject({
      delivery_id: journalled.delivery_id,
      status: 'delivered',
      attempts: 1,
      manual_retries: 1,
    });
  });

  it('matches events with subscriptions changed since it read them (another instance)', async () => {
    const live = dispatcher();
    live.start();
    // Read with no subscription at all.
    events.emit(executionEvent());
    await live.flush();
    // Created elsewhere: this dispatcher is not told, and its next journal write finds out.
    const subscription = await subscribe();
    events.emit(executionEvent());
    await live.flush();
    await receiver.waitFor(1);
    await live.stop();
    expect(receiver.deliveries).toHaveLength(1);
    expect(await onlyDelivery(subscription.webhook_id)).toMatchObject({ status: 'delivered' });
  });

  it('journals a batch again when the database refused it, with the same delivery ids', async () => {
    const subscription = await subscribe();
    let refusals = 2;
    const attempts: string[][] = [];
    const flaky: WebhooksRepository = {
      ...repository,
      async journalDeliveries(batch, version) {
        attempts.push(batch.deliveryIds);
        if (refusals-- > 0) throw new Error('Connection terminated unexpectedly');
        return repository.journalDeliveries(batch, version);
      },
    };
    const live = dispatcher({ repository: flaky });
    live.start();
    events.emit(executionEvent());
    await live.flush();
    await receiver.waitFor(1);
    await live.stop();
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts.map((ids) => ids.join()))).toEqual(new Set([attempts[0]?.join()]));
    expect(await onlyDelivery(subscription.webhook_id)).toMatchObject({
      delivery_id: attempts[0]?.[0],
      status: 'delivered',
    });
  });

  it('does not send rows waiting in memory once their subscription is disabled or deleted', async () => {
    const kept = await subscribe();
    const disabled = await subscribe();
    const deleted = await subscribe();
    // One slot, held by an answer that never comes (until the 2 s attempt timeout): the other
    // deliveries wait in memory, already leased.
    receiver.script({ hang: true });
    const { live } = liveDispatcher(1);
    events.emit(executionEvent());
    events.emit(executionEvent());
    await live.flush();
    await receiver.waitFor(1);
    await repository.setEnabled(disabled.webhook_id, false, clock);
    await repository.deleteSubscription(deleted.webhook_id);
    live.subscriptionsChanged();
    // Both events reached all three subscriptions; once the hung attempt times out only the
    // enabled subscription's rows go out (one of them may be the hung one, retried later).
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const sentTo = receiver.deliveries.slice(1).map((delivery) => delivery.headers['x-svc-delivery']);
    const keptRows = (await repository.listDeliveries(kept.webhook_id, { limit: 10, offset: 0 })).rows;
    const disabledRows = (await repository.listDeliveries(disabled.webhook_id, { limit: 10, offset: 0 }))
      .rows;
    const keptIds = new Set(keptRows.map((row) => row.delivery_id));
    expect(sentTo.length).toBeGreaterThan(0);
    expect(sentTo.every((id) => keptIds.has(id as string))).toBe(true);
    // The disabled subscription's rows are parked, unleased, and go out once it is enabled.
    const hung = receiver.deliveries[0]?.headers['x-svc-delivery'];
    const parked = disabledRows.filter((row) => row.delivery_id !== hung);
    expect(parked.length).toBeGreaterThan(0);
    for (const row of parked)
      expect(row).toMatchObject({ status: 'pending', next_attempt_at: null, claim_token: null });
    await repository.setEnabled(disabled.webhook_id, true, clock);
    live.wake();
    await receiver.waitFor(1 + sentTo.length + parked.length);
  });

  it('leaves a recorded lease that ran too short to be claimed again, and sends it once', async () => {
    const subscription = await subscribe();
    const { live, counter } = liveDispatcher(4);
    events.emit(executionEvent());
    await live.flush();
    // Before the pump runs, the schedule clock passes the lease of the recorded row.
    clock = new Date(clock.getTime() + 2 * MINUTE);
    await receiver.waitFor(1);
    await live.stop();
    expect(counter.claimed).toBe(1);
    expect(receiver.deliveries).toHaveLength(1);
    expect(await onlyDelivery(subscription.webhook_id)).toMatchObject({ status: 'delivered', attempts: 1 });
  });

  it('writes a batch of events again when the database refused it, and reports one it gives up on', async () => {
    await subscribe();
    let refusals = 2;
    const flaky: WebhooksRepository = {
      ...repository,
      async recordEvents(...args) {
        if (refusals-- > 0) throw new Error('Connection terminated unexpectedly');
        return repository.recordEvents(...args);
      },
    };
    const errors: string[] = [];
    const flakyDispatcher = dispatcher({
      repository: flaky,
      onError: (_error, message) => errors.push(message),
    });
    events.emit(executionEvent());
    await flakyDispatcher.flush();
    expect(errors).toEqual([]);
    expect(await flakyDispatcher.poll()).toBe(1);
    await receiver.waitFor(1);
    refusals = 100;
    events.emit(executionEvent());
    await flakyDispatcher.flush();
    expect(errors).toEqual(['webhook deliveries for 1 events could not be recorded']);
  });

  it("deletes the delivery history with its subscription and nobody else's", async () => {
    const doomed = await subscribe();
    const kept = await subscribe();
    const recorder = dispatcher();
    for (let index = 0; index < 3; index++) events.emit(executionEvent());
    await recorder.flush();
    expect(await repository.deleteSubscription(doomed.webhook_id)).toBe(true);
    const left = await database.db.selectFrom('webhook_deliveries').select(['webhook_id']).execute();
    expect(left.map((row) => row.webhook_id)).toEqual(Array(3).fill(kept.webhook_id));
  });

  it('never sends one delivery twice with two dispatchers on one database', async () => {
    await subscribe();
    const recorder = dispatcher();
    for (let index = 0; index < 300; index++) events.emit(executionEvent());
    await recorder.flush();
    const one = dispatcher({ withEvents: false, concurrency: 8 });
    const two = dispatcher({ withEvents: false, concurrency: 8 });
    const [a, b] = await Promise.all([one.poll(), two.poll()]);
    expect(a + b).toBe(300);
    await receiver.waitFor(300);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const ids = receiver.deliveries.map((delivery) => delivery.headers['x-svc-delivery']);
    expect(ids).toHaveLength(300);
    expect(new Set(ids).size).toBe(300);
    expect(receiver.deliveries.every((delivery) => delivery.verified)).toBe(true);
  });
});
