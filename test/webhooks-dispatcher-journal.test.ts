/**
 * The webhook dispatcher's journal and leases: deliveries it records itself and sends without
 * claiming, signing ahead, a dead dispatcher's journal turned into rows, writes the database
 * refused, rows held in memory for a subscription since disabled or deleted, and two
 * dispatchers on one database. webhooks-dispatcher.test.ts has the attempts and their schedule.
 */
import { describe, expect, it } from 'vitest';
import type { WebhooksRepository } from '../src/db/webhooks-repository.js';
import { createDispatcher } from '../src/webhooks/dispatcher.js';
import { createSender, type Sender } from '../src/webhooks/sender.js';
import { createSigner, type Signer } from '../src/webhooks/signer.js';
import { databaseTargets } from './helpers/databases.js';
import { DispatcherHarness, executionEvent, loopback, MINUTE } from './helpers/webhook-dispatcher-harness.js';

describe.each(databaseTargets())('webhook dispatcher on $name', (target) => {
  const harness = new DispatcherHarness(target);

  /** A started dispatcher over a repository that counts the rows it claims. */
  function liveDispatcher(concurrency: number) {
    const counter = { claimed: 0 };
    const counting: WebhooksRepository = {
      ...harness.repository,
      async claimDue(options) {
        const rows = await harness.repository.claimDue(options);
        counter.claimed += rows.length;
        return rows;
      },
    };
    const live = createDispatcher({
      repository: counting,
      sender: createSender({ policy: loopback, timeoutMs: 2000, maxSockets: 8 }),
      events: harness.events,
      now: () => harness.clock,
      timeoutMs: 2000,
      concurrency,
    });
    harness.dispatchers.push(live);
    live.start();
    return { live, counter };
  }

  it('sends the deliveries of events it records itself without claiming them', async () => {
    const subscription = await harness.subscribe();
    const { live, counter } = liveDispatcher(4);
    // A dispatcher that only claims, polling meanwhile, never gets a row leased to the other.
    const other = harness.dispatcher({ withEvents: false });
    for (let index = 0; index < 20; index++) harness.events.emit(executionEvent());
    await live.flush();
    expect(await other.poll()).toBe(0);
    await harness.receiver.waitFor(20);
    await live.stop();
    expect(counter.claimed).toBe(0);
    const ids = harness.receiver.deliveries.map((delivery) => delivery.headers['x-svc-delivery']);
    expect(new Set(ids).size).toBe(20);
    const { rows } = await harness.repository.listDeliveries(subscription.webhook_id, {
      limit: 50,
      offset: 0,
    });
    expect(rows.map((row) => row.status)).toEqual(Array(20).fill('delivered'));
    expect(rows.every((row) => row.claim_token === null)).toBe(true);
    // Every journal row went once its deliveries had their rows.
    expect(await harness.database.db.selectFrom('webhook_delivery_journal').selectAll().execute()).toEqual(
      [],
    );
  });

  it('signs a big batch ahead on the signing thread, and receivers verify those signatures', async () => {
    await harness.subscribe();
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
      repository: harness.repository,
      sender,
      signer: watching,
      events: harness.events,
      now: () => harness.clock,
      timeoutMs: 2000,
      concurrency: 1,
    });
    harness.dispatchers.push(live);
    live.start();
    for (let index = 0; index < 40; index++) harness.events.emit(executionEvent());
    await harness.receiver.waitFor(40);
    await live.stop();
    expect(presigned.filter(Boolean).length).toBeGreaterThanOrEqual(38);
    expect(harness.receiver.deliveries.every((delivery) => delivery.verified)).toBe(true);
  });

  /**
   * A started dispatcher whose attempts never end until `release()`: it stands for one that
   * journalled deliveries, sent them, and died before any answer.
   */
  function stalledDispatcher() {
    const waiting: Array<() => void> = [];
    const errors: string[] = [];
    const stalled = createDispatcher({
      repository: harness.repository,
      sender: {
        send: () =>
          new Promise((resolve) =>
            waiting.push(() =>
              resolve({ outcome: { kind: 'network_error' }, snippet: null, error: 'gone', durationMs: 0 }),
            ),
          ),
        close() {},
      },
      events: harness.events,
      now: () => harness.clock,
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
    const subscription = await harness.subscribe();
    const { stalled, sent, release } = stalledDispatcher();
    for (let index = 0; index < 3; index++) harness.events.emit(executionEvent());
    await stalled.flush();
    await expect.poll(sent).toBe(3);
    // Journalled, not yet rows: listed as pending all the same.
    const listed = await harness.repository.listDeliveries(subscription.webhook_id, { limit: 10, offset: 0 });
    expect(listed.total).toBe(3);
    expect(listed.rows.map((row) => [row.status, row.attempts])).toEqual(Array(3).fill(['pending', 0]));
    expect(await harness.database.db.selectFrom('webhook_deliveries').selectAll().execute()).toEqual([]);
    const survivor = harness.dispatcher({ withEvents: false });
    expect(await survivor.poll()).toBe(0);
    // The lease (attempt timeout + 60 s) runs out: any dispatcher turns the journal into rows.
    harness.clock = new Date(harness.clock.getTime() + 2000 + MINUTE + 1);
    expect(await survivor.poll()).toBe(3);
    await harness.receiver.waitFor(3);
    expect(
      new Set(harness.receiver.deliveries.map((delivery) => delivery.headers['x-svc-delivery'])),
    ).toEqual(new Set(listed.rows.map((row) => row.delivery_id)));
    // The dead dispatcher's late answers change nothing.
    await release();
    const { rows } = await harness.repository.listDeliveries(subscription.webhook_id, {
      limit: 10,
      offset: 0,
    });
    expect(rows.map((row) => [row.status, row.attempts])).toEqual(Array(3).fill(['delivered', 1]));
    expect(await harness.database.db.selectFrom('webhook_delivery_journal').selectAll().execute()).toEqual(
      [],
    );
  });

  it('re-arms a delivery that is still only in the journal', async () => {
    const subscription = await harness.subscribe();
    const { stalled, sent, release } = stalledDispatcher();
    harness.events.emit(executionEvent());
    await stalled.flush();
    await expect.poll(sent).toBe(1);
    const journalled = await harness.onlyDelivery(subscription.webhook_id);
    const rearmed = await harness.repository.rearm(
      subscription.webhook_id,
      journalled.delivery_id,
      harness.clock,
    );
    expect(rearmed).toMatchObject({ status: 'pending', attempts: 0, manual_retries: 1, claim_token: null });
    expect(await harness.dispatcher({ withEvents: false }).poll()).toBe(1);
    await harness.receiver.waitFor(1);
    // The stalled attempt's result comes last and does not overwrite the re-armed row's.
    await release();
    expect(await harness.onlyDelivery(subscription.webhook_id)).toMatchObject({
      delivery_id: journalled.delivery_id,
      status: 'delivered',
      attempts: 1,
      manual_retries: 1,
    });
  });

  it('matches events with subscriptions changed since it read them (another instance)', async () => {
    const live = harness.dispatcher();
    live.start();
    // Read with no subscription at all.
    harness.events.emit(executionEvent());
    await live.flush();
    // Created elsewhere: this dispatcher is not told, and its next journal write finds out.
    const subscription = await harness.subscribe();
    harness.events.emit(executionEvent());
    await live.flush();
    await harness.receiver.waitFor(1);
    await live.stop();
    expect(harness.receiver.deliveries).toHaveLength(1);
    expect(await harness.onlyDelivery(subscription.webhook_id)).toMatchObject({ status: 'delivered' });
  });

  it('journals a batch again when the database refused it, with the same delivery ids', async () => {
    const subscription = await harness.subscribe();
    let refusals = 2;
    const attempts: string[][] = [];
    const flaky: WebhooksRepository = {
      ...harness.repository,
      async journalDeliveries(batch, version) {
        attempts.push(batch.deliveryIds);
        if (refusals-- > 0) throw new Error('Connection terminated unexpectedly');
        return harness.repository.journalDeliveries(batch, version);
      },
    };
    const live = harness.dispatcher({ repository: flaky });
    live.start();
    harness.events.emit(executionEvent());
    await live.flush();
    await harness.receiver.waitFor(1);
    await live.stop();
    expect(attempts).toHaveLength(3);
    expect(new Set(attempts.map((ids) => ids.join()))).toEqual(new Set([attempts[0]?.join()]));
    expect(await harness.onlyDelivery(subscription.webhook_id)).toMatchObject({
      delivery_id: attempts[0]?.[0],
      status: 'delivered',
    });
  });

  it('does not send rows waiting in memory once their subscription is disabled or deleted', async () => {
    const kept = await harness.subscribe();
    const disabled = await harness.subscribe();
    const deleted = await harness.subscribe();
    // One slot, held by an answer that never comes (until the 2 s attempt timeout): the other
    // deliveries wait in memory, already leased.
    harness.receiver.script({ hang: true });
    const { live } = liveDispatcher(1);
    harness.events.emit(executionEvent());
    harness.events.emit(executionEvent());
    await live.flush();
    await harness.receiver.waitFor(1);
    await harness.repository.setEnabled(disabled.webhook_id, false, harness.clock);
    await harness.repository.deleteSubscription(deleted.webhook_id);
    live.subscriptionsChanged();
    // Both events reached all three subscriptions; once the hung attempt times out only the
    // enabled subscription's rows go out (one of them may be the hung one, retried later).
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const sentTo = harness.receiver.deliveries.slice(1).map((delivery) => delivery.headers['x-svc-delivery']);
    const keptRows = (await harness.repository.listDeliveries(kept.webhook_id, { limit: 10, offset: 0 }))
      .rows;
    const disabledRows = (
      await harness.repository.listDeliveries(disabled.webhook_id, { limit: 10, offset: 0 })
    ).rows;
    const keptIds = new Set(keptRows.map((row) => row.delivery_id));
    expect(sentTo.length).toBeGreaterThan(0);
    expect(sentTo.every((id) => keptIds.has(id as string))).toBe(true);
    // The disabled subscription's rows are parked, unleased, and go out once it is enabled.
    const hung = harness.receiver.deliveries[0]?.headers['x-svc-delivery'];
    const parked = disabledRows.filter((row) => row.delivery_id !== hung);
    expect(parked.length).toBeGreaterThan(0);
    for (const row of parked)
      expect(row).toMatchObject({ status: 'pending', next_attempt_at: null, claim_token: null });
    await harness.repository.setEnabled(disabled.webhook_id, true, harness.clock);
    live.wake();
    await harness.receiver.waitFor(1 + sentTo.length + parked.length);
  });

  it('leaves a recorded lease that ran too short to be claimed again, and sends it once', async () => {
    const subscription = await harness.subscribe();
    const { live, counter } = liveDispatcher(4);
    harness.events.emit(executionEvent());
    await live.flush();
    // Before the pump runs, the schedule clock passes the lease of the recorded row.
    harness.clock = new Date(harness.clock.getTime() + 2 * MINUTE);
    await harness.receiver.waitFor(1);
    await live.stop();
    expect(counter.claimed).toBe(1);
    expect(harness.receiver.deliveries).toHaveLength(1);
    expect(await harness.onlyDelivery(subscription.webhook_id)).toMatchObject({
      status: 'delivered',
      attempts: 1,
    });
  });

  it('writes a batch of events again when the database refused it, and reports one it gives up on', async () => {
    await harness.subscribe();
    let refusals = 2;
    const flaky: WebhooksRepository = {
      ...harness.repository,
      async recordEvents(...args) {
        if (refusals-- > 0) throw new Error('Connection terminated unexpectedly');
        return harness.repository.recordEvents(...args);
      },
    };
    const errors: string[] = [];
    const flakyDispatcher = harness.dispatcher({
      repository: flaky,
      onError: (_error, message) => errors.push(message),
    });
    harness.events.emit(executionEvent());
    await flakyDispatcher.flush();
    expect(errors).toEqual([]);
    expect(await flakyDispatcher.poll()).toBe(1);
    await harness.receiver.waitFor(1);
    refusals = 100;
    harness.events.emit(executionEvent());
    await flakyDispatcher.flush();
    expect(errors).toEqual(['webhook deliveries for 1 events could not be recorded']);
  });

  it("deletes the delivery history with its subscription and nobody else's", async () => {
    const doomed = await harness.subscribe();
    const kept = await harness.subscribe();
    const recorder = harness.dispatcher();
    for (let index = 0; index < 3; index++) harness.events.emit(executionEvent());
    await recorder.flush();
    expect(await harness.repository.deleteSubscription(doomed.webhook_id)).toBe(true);
    const left = await harness.database.db.selectFrom('webhook_deliveries').select(['webhook_id']).execute();
    expect(left.map((row) => row.webhook_id)).toEqual(Array(3).fill(kept.webhook_id));
  });

  it('never sends one delivery twice with two dispatchers on one database', async () => {
    await harness.subscribe();
    const recorder = harness.dispatcher();
    for (let index = 0; index < 300; index++) harness.events.emit(executionEvent());
    await recorder.flush();
    const one = harness.dispatcher({ withEvents: false, concurrency: 8 });
    const two = harness.dispatcher({ withEvents: false, concurrency: 8 });
    const [a, b] = await Promise.all([one.poll(), two.poll()]);
    expect(a + b).toBe(300);
    await harness.receiver.waitFor(300);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const ids = harness.receiver.deliveries.map((delivery) => delivery.headers['x-svc-delivery']);
    expect(ids).toHaveLength(300);
    expect(new Set(ids).size).toBe(300);
    expect(harness.receiver.deliveries.every((delivery) => delivery.verified)).toBe(true);
  });
});
