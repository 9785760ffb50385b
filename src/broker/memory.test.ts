import { describe, expect, it } from 'vitest';
import { describeBrokerConformance } from './broker.conformance.js';
import { BACKLOG_STALL_MS, createMemoryBroker } from './memory.js';

describeBrokerConformance('in-process', async () => createMemoryBroker());

describe('in-process broker', () => {
  it('refuses to publish once closed', async () => {
    const broker = createMemoryBroker();
    await broker.close();
    await expect(broker.publish('q', new Uint8Array())).rejects.toThrow('closed');
    await expect(broker.check()).rejects.toThrow();
  });
});

describe('in-process broker backlog', () => {
  const body = new Uint8Array([1]);
  const publishMany = async (broker: ReturnType<typeof createMemoryBroker>, count: number) => {
    for (let index = 0; index < count; index++) await broker.publish('q', body);
  };
  const settledWithin = (promise: Promise<void>, ms: number) =>
    Promise.race([
      promise.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms)),
    ]);

  it('answers at once while fewer than depth messages wait', async () => {
    const broker = createMemoryBroker();
    await publishMany(broker, 3);
    expect(await settledWithin(broker.backlogBelow?.('q', 4) as Promise<void>, 20)).toBe(true);
    expect(await settledWithin(broker.backlogBelow?.('unknown', 1) as Promise<void>, 20)).toBe(true);
    await broker.close();
  });

  it('waits until deliveries bring the backlog below depth', async () => {
    const broker = createMemoryBroker();
    await publishMany(broker, 10);
    const waiting = broker.backlogBelow?.('q', 5) as Promise<void>;
    expect(await settledWithin(waiting, 20)).toBe(false);
    // A consumer taking 3 at a time, acknowledging each after a turn: the queue moves, so the
    // wait goes on past the stall time until only 4 wait.
    const held: Array<() => Promise<void>> = [];
    await broker.subscribe('q', { prefetch: 3 }, async (message) => {
      held.push(() => message.ack());
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await settledWithin(waiting, 0)).toBe(false); // 7 wait
    for (const ack of held.splice(0)) await ack();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await settledWithin(waiting, 0)).toBe(true); // 4 wait
    await broker.close();
  });

  it('stops waiting once nothing is delivered for a while, or when closed', async () => {
    const broker = createMemoryBroker();
    await publishMany(broker, 10);
    const started = performance.now();
    await broker.backlogBelow?.('q', 5); // no consumer: nothing moves
    expect(performance.now() - started).toBeGreaterThanOrEqual(BACKLOG_STALL_MS - 5);
    const waiting = broker.backlogBelow?.('q', 5) as Promise<void>;
    await broker.close();
    expect(await settledWithin(waiting, 20)).toBe(true);
  });
});
