import { describe, expect, it } from 'vitest';
import { describeBrokerConformance } from './broker.conformance.js';
import type { BrokerMessage } from './broker.js';
import { createMemoryBroker } from './memory.js';

describeBrokerConformance('in-process', async () => createMemoryBroker());

describe('in-process broker', () => {
  it('refuses to publish once closed', async () => {
    const broker = createMemoryBroker();
    await broker.close();
    await expect(broker.publish('q', new Uint8Array())).rejects.toThrow('closed');
    await expect(broker.check()).rejects.toThrow();
  });
});

describe('in-process broker: released messages', () => {
  const text = (value: string) => new TextEncoder().encode(value);
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

  it('starts the next message once one is released, holding at most prefetch + settling unacknowledged', async () => {
    const broker = createMemoryBroker();
    const held: BrokerMessage[] = [];
    await broker.subscribe('q', { prefetch: 2, settling: 3 }, async (message) => {
      held.push(message);
      message.release?.();
    });
    for (let index = 0; index < 10; index++) await broker.publish('q', text(String(index)));
    await settle();
    expect(held).toHaveLength(5); // 2 + 3, every one released and none acknowledged
    for (const message of held.splice(0, 2)) await message.ack();
    await settle();
    expect(held).toHaveLength(5);
    await broker.close();
  });

  it('keeps a released message unacknowledged until its ack, and redelivers it on nack', async () => {
    const broker = createMemoryBroker();
    const seen: Array<{ body: string; delivery: number }> = [];
    let first: BrokerMessage | undefined;
    await broker.subscribe('q', { prefetch: 1, settling: 1 }, async (message) => {
      seen.push({ body: new TextDecoder().decode(message.body), delivery: message.deliveryCount });
      if (!first) {
        first = message;
        message.release?.();
        return;
      }
      await message.ack();
    });
    await broker.publish('q', text('a'));
    await broker.publish('q', text('b'));
    await settle();
    expect(seen).toEqual([
      { body: 'a', delivery: 1 },
      { body: 'b', delivery: 1 },
    ]);
    await first?.nack();
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(seen.at(-1)).toEqual({ body: 'a', delivery: 2 });
    await broker.close();
  });

  it('ignores release without a settling allowance: prefetch alone bounds what is held', async () => {
    const broker = createMemoryBroker();
    const held: BrokerMessage[] = [];
    await broker.subscribe('q', { prefetch: 2 }, async (message) => {
      held.push(message);
      message.release?.();
    });
    for (let index = 0; index < 5; index++) await broker.publish('q', text(String(index)));
    await settle();
    expect(held).toHaveLength(2);
    await broker.close();
  });
});
