/**
 * GET /metrics in Prometheus's text exposition format (outside /api/v1, where scrapers look by
 * default; guarded by auth.ts: an API key or a scraper token), and the timing of every answered
 * request by its route pattern, so that labels stay bounded whatever URLs clients send.
 */
import type { FastifyInstance } from 'fastify';
import { metricsContentType, metricsText, recordHttpRequest } from '../metrics/metrics.js';
import { METRICS_PATH } from './auth.js';

/** `timeRequests: false` on the separate metrics listener, whose only route is /metrics. */
export function installMetrics(app: FastifyInstance, options: { timeRequests?: boolean } = {}): void {
  if (options.timeRequests !== false) timeRequests(app);
  app.get(METRICS_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-type', metricsContentType).send(await metricsText()),
  );
}

function timeRequests(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    // Unmatched URLs (404s, scans) share one label value instead of one series each.
    const route = request.routeOptions.url ?? 'unmatched';
    if (route === METRICS_PATH) return;
    recordHttpRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });
}
