/**
 * Applies pending migrations at start-up. Several instances may start at once against one
 * server: each takes the same transaction-scoped advisory lock first, so one applies the
 * migrations and the others, once they get the lock, find nothing left to do.
 */
import { type Kysely, sql } from 'kysely';
import { migrations as allMigrations } from './migrations/index.js';
import type { Migration } from './migrations/migration.js';
import type { DatabaseSchema } from './schema.js';

/** An arbitrary constant: the advisory-lock key that serialises migrations ("weir" in ASCII). */
const MIGRATION_LOCK_KEY = 0x77656972;

export async function migrateToLatest(
  db: Kysely<DatabaseSchema>,
  migrations: readonly Migration[] = allMigrations,
): Promise<number[]> {
  return db.transaction().execute(async (transaction) => {
    await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`.execute(transaction);
    await sql`create table if not exists weir_schema_migrations (
      id integer primary key,
      name text not null,
      applied_at timestamptz not null default now()
    )`.execute(transaction);
    const applied = await transaction.selectFrom('weir_schema_migrations').select('id').execute();
    const appliedIds = new Set(applied.map((row) => row.id));
    const newlyApplied: number[] = [];
    for (const migration of [...migrations].sort((a, b) => a.id - b.id)) {
      if (appliedIds.has(migration.id)) continue;
      for (const statement of migration.statements) await sql.raw(statement).execute(transaction);
      await transaction
        .insertInto('weir_schema_migrations')
        .values({ id: migration.id, name: migration.name })
        .execute();
      newlyApplied.push(migration.id);
    }
    return newlyApplied;
  });
}
