/**
 * Whether the database has the pgvector extension. The embedded PGlite always has it; a
 * PostgreSQL server may not, and then every vector is still stored but vector and RRF search
 * (and chat retrieval that needs them) answer 503 vector_search_unavailable. That is a standing
 * state of the deployment, so it is warned about once at start-up (serve.ts), not per request.
 */
import { type Kysely, sql } from 'kysely';
import type { DatabaseSchema } from './schema.js';

/** True when the `vector` extension is installed in the connected database. */
export async function pgvectorInstalled(db: Kysely<DatabaseSchema>): Promise<boolean> {
  const result = await sql<{
    present: boolean;
  }>`select exists (select 1 from pg_extension where extname = 'vector') as present`.execute(db);
  return Boolean(result.rows[0]?.present);
}

/** The start-up warning for a database without pgvector, or undefined when it has it. */
export async function missingPgvectorWarning(db: Kysely<DatabaseSchema>): Promise<string | undefined> {
  if (await pgvectorInstalled(db)) return undefined;
  return (
    'this PostgreSQL server has no pgvector extension: vectors are stored, but vector and RRF search ' +
    'and chat strategies other than keyword answer 503 vector_search_unavailable; keyword search works ' +
    '(install pgvector and restart, or use the embedded database)'
  );
}
