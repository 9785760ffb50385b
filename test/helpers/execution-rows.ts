/**
 * The rows a repository test or bench stands on: a config, executions of it (with an init message
 * or none), and queued messages, for tables keyed to an execution (lineage, sync state, claims,
 * fan-in).
 */
import type { Kysely } from 'kysely';
import { uuidv7 } from 'uuidv7';
import { createConfigsRepository } from '../../src/db/configs-repository.js';
import type { NewMessage } from '../../src/db/execution-types.js';
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

/**
 * An execution of `configId`: with `init`, started with it as its init message (queued), else
 * with none (skip_init_message). Its id.
 */
export async function insertExecution(
  db: Kysely<DatabaseSchema>,
  configId: string,
  init?: NewMessage,
  options: { messageBudget?: number | null; initPayload?: Record<string, unknown> } = {},
): Promise<string> {
  const id = uuidv7();
  await createExecutionsRepository(db).createExecution({
    id,
    config_id: configId,
    config_version: 1,
    config_hash: 'h',
    config_yaml: 'routes: []',
    tag: null,
    skip_init_message: init === undefined,
    init_payload: options.initPayload ?? {},
    init,
    now: new Date(),
    ...(options.messageBudget !== undefined ? { message_budget: options.messageBudget } : {}),
  });
  return id;
}

/**
 * A message as the engine queues it: an init message (`parent` null) or an output of `parent`,
 * on route `r` from stage `source` to `sink`.
 */
export function queuedMessage(
  parent: string | null,
  envelope: Uint8Array = new Uint8Array([1]),
  messageId: string = uuidv7(),
): NewMessage {
  return {
    message_id: messageId,
    correlation_id: parent,
    route_id: 'r',
    stage: parent === null ? 'source' : 'sink',
    emitted_by: parent === null ? 'init' : 'source',
    envelope,
  };
}
