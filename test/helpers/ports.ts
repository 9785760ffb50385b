/**
 * A port for a child `weir serve` (or any server a test or bench starts in another process).
 *
 * Why not `20000 + random(20000)`: the upper part of that range lies in the kernel's ephemeral
 * range (32768-60999 here), where every outgoing loopback connection of the suite (Postgres,
 * RabbitMQ, fetch) and every TIME_WAIT it leaves holds a local port. A server bound to one of
 * them exits with EADDRINUSE, and CI failed a test on it (stop 47). So the port is drawn
 * below the ephemeral range and is checked free by binding it once; the small race left
 * (another process binds it between the check and the child's listen) is what
 * `startWeirProcess` retries.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const LOWEST = 20000;
/** The kernel's first ephemeral port; 32768 where /proc does not say. */
function ephemeralStart(): number {
  try {
    const first = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    return Number.isInteger(first) && first > LOWEST + 1000 ? first : 32768;
  } catch {
    return 32768;
  }
}

/** Whether `port` can be listened on at `host` now. */
function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A free port in [20000, first ephemeral port), drawn at random so parallel tests differ. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const end = ephemeralStart();
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (end - LOWEST));
    if (await canListen(port, host)) return port;
  }
  throw new Error(`no free port in ${LOWEST}-${end - 1} after 100 tries`);
}
