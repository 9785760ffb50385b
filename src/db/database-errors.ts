/**
 * Whether an error means the database cannot be reached (rather than that a statement was
 * wrong): the API answers those with 503 database_unavailable, retryable, instead of a 500.
 */

/**
 * Socket errors of a database connection (node-postgres rejects with them as they are). Only
 * an error's own code counts: other clients (fetch, the LLM and embedding providers) wrap
 * theirs, and their causes must not read as the database.
 */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/** PostgreSQL's shutdown (57P0x) and too-many-connections codes; class 08 is matched below. */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);

const UNAVAILABLE_MESSAGES = [
  /driver has already been destroyed/, // Kysely after the database was closed
  /the PGlite thread stopped/,
  /Connection terminated/, // node-postgres
  /Client has encountered a connection error/,
  /Cannot use a pool after calling end/,
];

export function isDatabaseUnavailable(error: unknown): boolean {
  const ownCode = (error as { code?: unknown } | undefined)?.code;
  if (error instanceof Error && typeof ownCode === 'string' && SOCKET_CODES.has(ownCode)) return true;
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    const { code, message, cause } = current as Error & { code?: unknown };
    if (typeof code === 'string' && (SERVER_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
    if (UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message))) return true;
    current = cause;
  }
  return false;
}
