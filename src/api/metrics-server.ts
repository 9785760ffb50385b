/**
 * The metrics listener of WEIR_METRICS_PORT: a `--role worker` process serves no API, yet a
 * scraper must reach its counters. GET /metrics only, guarded like the API's (auth.ts); any
 * role may use it to keep scrapes off the public port.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Settings } from '../settings.js';
import { installApiKeyCheck } from './auth.js';
import { installMetrics } from './metrics.js';

export async function startMetricsServer(settings: Settings, port: number): Promise<FastifyInstance> {
  const server = Fastify({ logger: false });
  installApiKeyCheck(server, settings.api_keys, settings.metrics_tokens);
  installMetrics(server, { timeRequests: false });
  await server.listen({ host: settings.host, port });
  return server;
}
