/**
 * A STOMP 1.2 server on loopback for diagnostic tests: answers CONNECT with CONNECTED, turns
 * each SEND into a MESSAGE for the subscription of its destination, and keeps every raw byte
 * it received, so a test can see exactly what reached the wire.
 */
import net from 'node:net';
import { createFrameParser, encodeFrame, type Frame } from '../../src/broker/stomp/frames.js';

export interface StompDouble {
  port: number;
  /** Everything received, across connections, as latin1 text. */
  received(): string;
  frames: Frame[];
  connections(): number;
  close(): Promise<void>;
}

export async function startStompDouble(): Promise<StompDouble> {
  const chunks: Buffer[] = [];
  const frames: Frame[] = [];
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    const subscriptions = new Map<string, string>();
    const parser = createFrameParser((frame) => {
      frames.push(frame);
      if (frame.command === 'CONNECT' || frame.command === 'STOMP') {
        socket.write(
          encodeFrame('CONNECTED', { version: '1.2', server: 'stomp-double/1', 'heart-beat': '0,0' }),
        );
      } else if (frame.command === 'SUBSCRIBE') {
        subscriptions.set(frame.headers.destination ?? '', frame.headers.id ?? '');
      } else if (frame.command === 'SEND') {
        const destination = frame.headers.destination ?? '';
        const subscription = subscriptions.get(destination);
        if (subscription !== undefined) {
          const { 'content-length': _length, ...headers } = frame.headers;
          socket.write(
            encodeFrame(
              'MESSAGE',
              { ...headers, subscription, 'message-id': String(frames.length) },
              frame.body,
            ),
          );
        }
      }
    });
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      try {
        parser.push(chunk);
      } catch {
        socket.destroy();
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    received: () => Buffer.concat(chunks).toString('latin1'),
    frames,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
