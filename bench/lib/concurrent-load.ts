/**
 * Throughput of one search endpoint under `clients` concurrent HTTP clients, each sending its
 * next query as soon as the previous answer arrived, for `seconds`. Queries cycle through the
 * question set, so the server sees the same mix as the quality run; every request is at the
 * defaults (no options).
 */
import { percentile } from '../../src/evaluation/metrics.js';

export interface LoadFigures {
  clients: number;
  seconds: number;
  requests: number;
  requests_per_second: number;
  errors: number;
  latency_ms: { p50: number; p99: number };
}

export async function concurrentLoad(options: {
  url: string;
  queries: readonly string[];
  clients: number;
  seconds: number;
}): Promise<LoadFigures> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const deadline = started + options.seconds * 1000;
  const client = async () => {
    while (performance.now() < deadline) {
      const query = options.queries[next++ % options.queries.length] as string;
      const sent = performance.now();
      try {
        const response = await fetch(options.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query }),
        });
        await response.arrayBuffer();
        if (!response.ok) errors++;
      } catch {
        errors++;
      }
      latencies.push(performance.now() - sent);
    }
  };
  await Promise.all(Array.from({ length: options.clients }, client));
  const elapsed = (performance.now() - started) / 1000;
  return {
    clients: options.clients,
    seconds: Math.round(elapsed * 10) / 10,
    requests: latencies.length,
    requests_per_second: Math.round((latencies.length / elapsed) * 10) / 10,
    errors,
    latency_ms: { p50: percentile(latencies, 50), p99: percentile(latencies, 99) },
  };
}
