/** One conformance suite for every Broker implementation (in-process now, STOMP next). */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Broker, BrokerMessage } from './broker.js';

const text = (value: string) => new TextEncoder().encode(value);
const read = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

async function eventually(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function describeBrokerConformance(name: string, createBroker: () => Promise<Broker>): void {
  describe(`broker conformance: ${name}`, () => {
    let broker: Broker;
    let prefix: string;
    beforeEach(async () => {
      broker = await createBroker();
      prefix = `conformance-${Date.now()}-${Math.random().toString(16).slice(2)}`;
    });
    afterEach(async () => {
      await broker.close();
    });

    it('delivers queued bytes and headers, in order, to one subscriber', async () => {
      const received: string[] = [];
      const sub = await broker.subscribe(`${prefix}.q`, { prefetch: 1 }, async (message) => {
        received.push(`${read(message.body)}:${message.headers['x-test'] ?? ''}`);
        await message.ack();
      });
      for (let index = 0; index < 5; index++)
        await broker.publish(`${prefix}.q`, text(`m${index}`), { 'x-test': 'h' });
      await eventually(() => received.length === 5);
      expect(received).toEqual(['m0:h', 'm1:h', 'm2:h', 'm3:h', 'm4:h']);
      await sub.unsubscribe();
    });

    it('keeps binary bodies intact', async () => {
      const body = new Uint8Array(256).map((_, index) => index);
      let got: Uint8Array | undefined;
      await broker.subscribe(`${prefix}.bin`, { prefetch: 1 }, async (message) => {
        got = message.body;
        await message.ack();
      });
      await broker.publish(`${prefix}.bin`, body);
      await eventually(() => got !== undefined);
      expect(Array.from(got as Uint8Array)).toEqual(Array.from(body));
    });

    it('keeps messages published before anyone subscribed', async () => {
      await broker.publish(`${prefix}.early`, text('waiting'));
      let got = '';
      await broker.subscribe(`${prefix}.early`, { prefetch: 1 }, async (message) => {
        got = read(message.body);
        await message.ack();
      });
      await eventually(() => got === 'waiting');
    });

    it('gives each message to exactly one of several subscribers', async () => {
      const seen: string[] = [];
      const handler = async (message: BrokerMessage) => {
        seen.push(read(message.body));
        await message.ack();
      };
      await broker.subscribe(`${prefix}.shared`, { prefetch: 2 }, handler);
      await broker.subscribe(`${prefix}.shared`, { prefetch: 2 }, handler);
      for (let index = 0; index < 40; index++) await broker.publish(`${prefix}.shared`, text(String(index)));
      await eventually(() => seen.length >= 40);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(seen.sort()).toEqual(Array.from({ length: 40 }, (_, index) => String(index)).sort());
    });

    it('holds at most prefetch unacknowledged messages per subscriber', async () => {
      const held: BrokerMessage[] = [];
      await broker.subscribe(`${prefix}.prefetch`, { prefetch: 3 }, async (message) => {
        held.push(message);
      });
      for (let index = 0; index < 10; index++)
        await broker.publish(`${prefix}.prefetch`, text(String(index)));
      await eventually(() => held.length === 3);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(held).toHaveLength(3);
      await held[0]?.ack();
      await eventually(() => held.length === 4);
      for (const message of held.slice(1)) await message.ack();
    });

    it('redelivers a nacked message later, with a higher delivery count', async () => {
      const deliveries: number[] = [];
      await broker.subscribe(`${prefix}.nack`, { prefetch: 1 }, async (message) => {
        deliveries.push(message.deliveryCount);
        if (deliveries.length === 1) await message.nack();
        else await message.ack();
      });
      await broker.publish(`${prefix}.nack`, text('retry me'));
      await eventually(() => deliveries.length === 2);
      expect(deliveries[0]).toBe(1);
      expect(deliveries[1]).toBeGreaterThan(1);
    });

    it('broadcasts topic messages to every subscriber', async () => {
      const first: string[] = [];
      const second: string[] = [];
      await broker.subscribeTopic(`${prefix}.events`, (body) => first.push(read(body)));
      await broker.subscribeTopic(`${prefix}.events`, (body) => second.push(read(body)));
      await new Promise((resolve) => setTimeout(resolve, 100));
      await broker.publishTopic(`${prefix}.events`, text('hello'));
      await broker.publishTopic(`${prefix}.events`, text('world'));
      await eventually(() => first.length === 2 && second.length === 2);
      // Each subscriber gets every message, intact and in order; other topics stay apart.
      expect(first).toEqual(['hello', 'world']);
      expect(second).toEqual(['hello', 'world']);
      const other: string[] = [];
      await broker.subscribeTopic(`${prefix}.other`, (body) => other.push(read(body)));
      await new Promise((resolve) => setTimeout(resolve, 100));
      await broker.publishTopic(`${prefix}.other`, text('elsewhere'));
      await eventually(() => other.length === 1);
      expect(other).toEqual(['elsewhere']);
      expect(first).toEqual(['hello', 'world']);
    });

    it('passes its health check', async () => {
      await expect(broker.check()).resolves.toBeUndefined();
    });
  });
}
