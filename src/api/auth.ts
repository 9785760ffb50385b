/**
 * API keys: with WEIR_API_KEYS set, every request needs `Authorization: Bearer <key>`, except
 * the health and version probes that load balancers and monitors call without credentials
 * (without a key, version names only the service's own version: exact component versions
 * tell an attacker which known flaws to try; health's `debug=true` details, which name the
 * data dir and the database and broker hosts, answer 401).
 * Keys are compared through their SHA-256 digests with timingSafeEqual, and every key is
 * compared, so neither the length nor the position of a match leaks through timing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError, errorBody } from '../errors.js';

export const publicEndpoints = new Set([
  'GET /api/v1/system/health',
  'GET /api/v1/system/ready',
  'GET /api/v1/system/version',
]);

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * False when API keys are set and the request has none that matches (only public
     * endpoints are reached so): they then answer less (no exact component versions).
     */
    hasApiKey: boolean;
  }
}

/** The console's files (`/`, `/console/...`) hold no data: the console asks for a key itself. */
function isConsoleAsset(method: string, path: string | undefined): boolean {
  return method === 'GET' && (path === '/' || (path?.startsWith('/console/') ?? false));
}

export const METRICS_PATH = '/metrics';

/**
 * `metricsTokens` are a Prometheus scraper's credentials: they open GET /metrics and nothing
 * else, so the scraper's configuration never holds a key to the data. Set, /metrics needs one
 * of them (or an API key) even on an API without keys.
 */
export function installApiKeyCheck(
  app: FastifyInstance,
  apiKeys: readonly string[],
  metricsTokens: readonly string[] = [],
): void {
  app.decorateRequest('hasApiKey', true);
  if (apiKeys.length === 0 && metricsTokens.length === 0) return;
  const digests = apiKeys.map(digest);
  const scraperDigests = metricsTokens.map(digest);
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0];
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header);
    const presented = match?.[1] === undefined ? undefined : digest(match[1].trim());
    request.hasApiKey = apiKeys.length === 0 || (presented !== undefined && matchesAny(presented, digests));
    if (method === 'GET' && path === METRICS_PATH && scraperDigests.length > 0) {
      const scraper = presented !== undefined && matchesAny(presented, scraperDigests);
      if (scraper || (apiKeys.length > 0 && request.hasApiKey)) return;
      return answerUnauthorized(reply);
    }
    if (request.hasApiKey || publicEndpoints.has(`${method} ${path}`) || isConsoleAsset(method, path)) return;
    return answerUnauthorized(reply);
  });
}

/** 401 with `WWW-Authenticate: Bearer`: also for what a public endpoint shows only with a key. */
export function answerUnauthorized(reply: FastifyReply): FastifyReply {
  return reply
    .status(401)
    .header('www-authenticate', 'Bearer')
    .send(
      errorBody(new AppError('unauthorized', 'missing or invalid API key: send Authorization: Bearer <key>')),
    );
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

function matchesAny(candidate: Buffer, digests: readonly Buffer[]): boolean {
  let matched = false;
  for (const known of digests) matched = timingSafeEqual(candidate, known) || matched;
  return matched;
}
