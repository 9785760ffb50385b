/**
 * The brokers every engine test runs on: the in-process broker always, and RabbitMQ over
 * STOMP when WEIR_TEST_STOMP_URL is set (CI sets it) or the local listener answers.
 */
import net from 'node:net';
import type { Broker } from '../../src/broker/broker.js';
import { createMemoryBroker } from '../../src/broker/memory.js';
import { connectStompBroker } from '../../src/broker/stomp/stomp-broker.js';
import { type DatabaseTarget, databaseTargets } from './databases.js';

export interface BrokerTarget {
  readonly name: 'memory' | 'stomp';
  open(): Promise<Broker & { dropConnection?: () => void }>;
}

export const stompUrl = process.env.WEIR_TEST_STOMP_URL ?? 'stomp://guest:guest@127.0.0.1:61613';

export async function brokerTargets(): Promise<BrokerTarget[]> {
  const targets: BrokerTarget[] = [{ name: 'memory', open: async () => createMemoryBroker() }];
  if (process.env.WEIR_TEST_STOMP_URL || (await listening(stompUrl))) {
    targets.push({ name: 'stomp', open: () => connectStompBroker(stompUrl) });
  }
  return targets;
}

function listening(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || 61613) }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

/** Every database target with every broker target, for tests of the engine and its API. */
export async function engineCombinations(): Promise<
  Array<{ name: string; database: DatabaseTarget; broker: BrokerTarget }>
> {
  return (await brokerTargets()).flatMap((broker) =>
    databaseTargets().map((database) => ({ name: `${database.name} + ${broker.name}`, database, broker })),
  );
}
