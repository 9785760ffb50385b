/**
 * Whether an error means the database cannot be reached (rather than that a statement was
 * wrong): the API answers those with 503 database_unavailable, retryable, instead of a 500.
 */

/** Node socket errors and PostgreSQL's "connection exception" (08) and shutdown (57P0x) codes. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
]);

const UNAVAILABLE_MESSAGES = [
  /driver has already been destroyed/, // Kysely after the database was closed
  /the PGlite thread stopped/,
  /Connection terminated/, // node-postgres
  /Client has encountered a connection error/,
  /Cannot use a pool after calling end/,
];

export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    const { code, message, cause } = current as Error & { code?: unknown };
    if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)))
      return true;
    if (UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message))) return true;
    current = cause;
  }
  return false;
}
