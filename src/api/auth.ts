/**
 * API keys: with WEIR_API_KEYS set, every request needs `Authorization: Bearer <key>`, except
 * the health and version probes that load balancers and monitors call without credentials.
 * Keys are compared through their SHA-256 digests with timingSafeEqual, and every key is
 * compared, so neither the length nor the position of a match leaks through timing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { AppError, errorBody } from '../errors.js';

export const publicEndpoints = new Set(['GET /api/v1/system/health', 'GET /api/v1/system/version']);

export function installApiKeyCheck(app: FastifyInstance, apiKeys: readonly string[]): void {
  if (apiKeys.length === 0) return;
  const digests = apiKeys.map(digest);
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0];
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    if (publicEndpoints.has(`${method} ${path}`)) return;
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (match?.[1] && matchesAny(digest(match[1].trim()), digests)) return;
    return reply
      .status(401)
      .header('www-authenticate', 'Bearer')
      .send(
        errorBody(
          new AppError('unauthorized', 'missing or invalid API key: send Authorization: Bearer <key>'),
        ),
      );
  });
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

function matchesAny(candidate: Buffer, digests: readonly Buffer[]): boolean {
  let matched = false;
  for (const known of digests) matched = timingSafeEqual(candidate, known) || matched;
  return matched;
}
