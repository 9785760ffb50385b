/**
 * The rows a repository test stands on: a config, and executions of it (no init message), for
 * tables keyed to an execution (lineage, sync state, claims, fan-in).
 */
import type { Kysely } from 'kysely';
import { uuidv7 } from 'uuidv7';
import { createConfigsRepository } from '../../src/db/configs-repository.js';
import { createExecutionsRepository } from '../../src/db/executions-repository.js';
import type { DatabaseSchema } from '../../src/db/schema.js';

export async function insertConfig(db: Kysely<DatabaseSchema>): Promise<string> {
  const id = uuidv7();
  await createConfigsRepository(db).insert({
    id,
    name: 'c',
    description: null,
    origin: 'api',
    config_yaml: 'routes: []',
    config_hash: 'h',
    now: new Date(),
  });
  return id;
}

export async function insertExecution(db: Kysely<DatabaseSchema>, configId: string): Promise<string> {
  const id = uuidv7();
  await createExecutionsRepository(db).createExecution({
    id,
    config_id: configId,
    config_version: 1,
    config_hash: 'h',
    config_yaml: 'routes: []',
    tag: null,
    skip_init_message: true,
    init_payload: {},
    init: undefined,
    now: new Date(),
  });
  return id;
}
