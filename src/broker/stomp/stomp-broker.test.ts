/**
 * The STOMP broker against the local RabbitMQ (rabbitmq_stomp on 61613). CI sets
 * WEIR_TEST_STOMP_URL, so there the suite must run and pass; elsewhere it runs when the
 * listener answers.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { skipBecause } from '../../../test/helpers/skip.js';
import { describeBrokerConformance } from '../broker.conformance.js';
import { createFrameParser, encodeFrame, type Frame } from './frames.js';
import { connectStompBroker, parseStompUrl } from './stomp-broker.js';

const url = process.env.WEIR_TEST_STOMP_URL ?? 'stomp://guest:guest@127.0.0.1:61613';
const available = Boolean(process.env.WEIR_TEST_STOMP_URL) || (await reachable(61613));

async function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

describe('parseStompUrl', () => {
  it('reads credentials, virtual host, TLS and heart-beat', () => {
    expect(parseStompUrl('stomp+ssl://user:p%40ss@mq.example:61614/weir?heartbeat_ms=5000')).toMatchObject({
      host: 'mq.example',
      port: 61614,
      login: 'user',
      passcode: 'p@ss',
      virtualHost: 'weir',
      tls: true,
      heartbeatMs: 5000,
    });
    expect(parseStompUrl('stomp://127.0.0.1')).toMatchObject({
      port: 61613,
      virtualHost: '/',
      tls: false,
      queueExpiresMs: 3_600_000,
    });
    expect(() => parseStompUrl('amqp://127.0.0.1')).toThrow('unsupported broker URL scheme');
  });
});

describe('publisher receipts (a STOMP server on loopback that answers when told to)', () => {
  it('resolves a persistent send only once the broker has sent its RECEIPT', async () => {
    const sends: Frame[] = [];
    let answer: (() => void) | undefined;
    const server = net.createServer((socket) => {
      const parser = createFrameParser((frame) => {
        if (frame.command === 'CONNECT')
          socket.write(encodeFrame('CONNECTED', { version: '1.2', 'heart-beat': '0,0' }));
        if (frame.command === 'SEND') {
          sends.push(frame);
          answer = () => socket.write(encodeFrame('RECEIPT', { 'receipt-id': frame.headers.receipt ?? '' }));
        }
      });
      socket.on('data', (chunk: Buffer) => parser.push(chunk));
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const broker = await connectStompBroker(`stomp://guest:guest@127.0.0.1:${port}?heartbeat_ms=0`);
    let published = false;
    const publishing = broker.publish('receipts', new TextEncoder().encode('x')).then(() => {
      published = true;
    });
    while (!answer) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(published).toBe(false);
    expect(sends[0]?.headers).toMatchObject({ destination: '/queue/receipts', persistent: 'true' });
    expect(sends[0]?.headers.receipt).toEqual(expect.any(String));
    answer();
    await publishing;
    expect(published).toBe(true);
    broker.dropConnection();
    await broker.close();
    server.close();
  });

  it('on an ERROR naming a send, reconnects and sends again, and the publish resolves', async () => {
    const sends: Frame[] = [];
    let connections = 0;
    const server = net.createServer((socket) => {
      connections++;
      const parser = createFrameParser((frame) => {
        if (frame.command === 'CONNECT')
          socket.write(encodeFrame('CONNECTED', { version: '1.2', 'heart-beat': '0,0' }));
        if (frame.command !== 'SEND') return;
        sends.push(frame);
        const receiptId = frame.headers.receipt ?? '';
        if (sends.length === 1) {
          // As RabbitMQ does on a refused frame: ERROR naming the receipt, then the close.
          socket.end(encodeFrame('ERROR', { 'receipt-id': receiptId, message: 'try again' }));
        } else {
          socket.write(encodeFrame('RECEIPT', { 'receipt-id': receiptId }));
        }
      });
      socket.on('data', (chunk: Buffer) => parser.push(chunk));
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const warnings: string[] = [];
    const broker = await connectStompBroker(`stomp://guest:guest@127.0.0.1:${port}?heartbeat_ms=0`, {
      warn: (_object, message) => warnings.push(message),
    });
    await broker.publish('refused-once', new TextEncoder().encode('x'));
    expect(sends).toHaveLength(2);
    expect(sends[1]?.headers.receipt).not.toBe(sends[0]?.headers.receipt);
    expect(connections).toBe(2);
    expect(warnings).toContain('STOMP ERROR frame; reconnecting');
    expect(broker.describeConnection()).toMatch(/^connected to .* 1 reconnect\b/);
    await broker.close();
    expect(broker.describeConnection()).toMatch(/^closed/);
    server.close();
  });
});

describe.skipIf(
  skipBecause(
    available ? undefined : "RabbitMQ's STOMP listener does not answer (set WEIR_TEST_STOMP_URL; CI does)",
    'the STOMP broker on RabbitMQ',
  ),
)('STOMP broker on RabbitMQ', () => {
  describeBrokerConformance('STOMP (RabbitMQ)', () => connectStompBroker(url));

  it('refuses wrong credentials with a clear error', async () => {
    const wrong = url.replace(/\/\/[^@]*@/, '//guest:wrong-password@');
    await expect(connectStompBroker(wrong)).rejects.toThrow(/refused|closed/);
  });

  it('reconnects after the socket is cut, resubscribes, and loses nothing', async () => {
    const broker = await connectStompBroker(url);
    const queue = `reconnect-${Date.now()}`;
    const received = new Set<string>();
    await broker.subscribe(queue, { prefetch: 5 }, async (message) => {
      received.add(new TextDecoder().decode(message.body));
      await message.ack();
    });
    for (let index = 0; index < 50; index++) {
      if (index === 25) broker.dropConnection();
      await broker.publish(queue, new TextEncoder().encode(String(index)));
    }
    const deadline = Date.now() + 15_000;
    while (received.size < 50 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(received.size).toBe(50);
    expect(broker.connected()).toBe(true);
    await broker.close();
  });
  it('waits longer before each redelivery of a message nacked again and again', async () => {
    const broker = await connectStompBroker(url);
    const queue = `nack-${Date.now()}`;
    const deliveries: number[] = [];
    await broker.subscribe(queue, { prefetch: 1 }, async (message) => {
      deliveries.push(performance.now());
      if (deliveries.length < 5) await message.nack();
      else await message.ack();
    });
    await broker.publish(queue, new TextEncoder().encode('poison'));
    const deadline = Date.now() + 10_000;
    while (deliveries.length < 5 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(deliveries).toHaveLength(5);
    const gaps = deliveries.slice(1).map((at, index) => at - (deliveries[index] as number));
    // 50, 100, 200, 400 ms (RabbitMQ's classic queues say only "redelivered", not how often).
    expect(gaps[0]).toBeLessThan(300);
    expect(gaps[3]).toBeGreaterThanOrEqual(390);
    expect(gaps[3] as number).toBeGreaterThan((gaps[0] as number) * 2);
    await broker.close();
  });
});
