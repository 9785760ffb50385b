/**
 * The adapter plugin contract. An adapter is one module calling `defineAdapter`: its `config`
 * TypeBox schema is at once the validation, the defaults and the documentation served by
 * GET /api/v1/adapters/{type}; `create` turns a validated config into a message handler.
 * Adapters get every resource through `resources` and `context`; they never open their own
 * connections or read environment variables.
 */
import type { Static, TSchema } from 'typebox';
import type { StorageCatalogueRepository } from '../db/storage-catalogue-repository.js';
import type { EmbedderCatalog } from '../embedding/embedder.js';
import type { ExecutionClaims, ExecutionFanIn, SyncState } from '../ports/execution-state.js';
import type { KnowledgeIndex } from '../search-index/knowledge-index.js';
import type { Settings } from '../settings.js';
import type { ObjectInfo, ObjectStore } from '../storage/object-store.js';

export type { ExecutionClaims, ExecutionFanIn, SyncState } from '../ports/execution-state.js';

export const adapterGroups = [
  'web',
  'markdown',
  'embedding',
  'translation',
  'redaction',
  'knowledge',
  'fileshare',
  'conversation',
  'routines',
  'wiki',
  'synthetic',
] as const;

export type AdapterGroup = (typeof adapterGroups)[number];

/** One message an adapter emits. */
export interface AdapterOutput {
  payload: Record<string, unknown>;
  /**
   * Explicit destination (spec 2.3 rule 2): a route id whose inbound queue receives this
   * message. Absent: the next stage of the same route, or the step's configured destination.
   */
  destination?: string;
  /** Merged into the envelope metadata of this output. */
  metadata?: Record<string, unknown>;
  /**
   * Batch stages only: the index (in `messages`) of the input this output answers. Absent,
   * the output is an aggregate of the batch and is recorded under its first message.
   */
  batchIndex?: number;
}

/** What a handler knows about the message it is processing. */
export interface AdapterContext {
  readonly executionId: string;
  readonly routeId: string;
  readonly stage: string;
  readonly messageId: string;
  readonly correlationId: string;
  /** The envelope's `batch_id`: set on the outputs of a batch stage (one per input, or an aggregate). */
  readonly batchId: string | undefined;
  readonly metadata: Readonly<Record<string, unknown>>;
  /** The step's `destination` from the pipeline YAML, when it has one. */
  readonly destination: string | undefined;
  /** Aborted when the execution is cancelled or the route stopped. */
  readonly signal: AbortSignal;
  /** The state incremental sources keep between runs of this pipeline config (SyncState). */
  readonly syncState: SyncState;
  /** Keys this execution has seen, each claimed once (a crawler's URLs). */
  readonly claims: ExecutionClaims;
  /** Arrivals counted once per item, and one completion per group (conv_filtered_collector). */
  readonly fanIn: ExecutionFanIn;
  /**
   * Writes a stage output object at `<execution_id>/<stage>/<path>` with its sidecar and
   * announces it (storage.object_created / storage.object.created). Use a path derived from
   * the input (a URL hash, the message id) so a retried message rewrites the same object.
   */
  readonly writeObject: (
    path: string,
    body: Uint8Array | string,
    options?: { contentType?: string; metadata?: Record<string, unknown> },
  ) => Promise<ObjectInfo>;
}

/** Shared services an adapter instance may use (filled in by the engine). */
export interface AdapterResources {
  readonly now: () => Date;
  readonly newId: () => string;
  /** The object store, for reading stage outputs by key; write through `context.writeObject`. */
  readonly storage: ObjectStore;
  /** The database catalogue of stored objects (listings by prefix, stage, extension, date). */
  readonly storageCatalogue?: StorageCatalogueRepository | undefined;
  /** Documents, segments and embeddings that search and chat read. */
  readonly knowledge: KnowledgeIndex;
  /** Embedding models configured in the `embedding_models` setting. */
  readonly embedders: EmbedderCatalog;
  /** Service settings (read-only): LLM profiles, browser path, limits. */
  readonly settings: Readonly<Settings>;
  /** The sync state of one run of a config (the engine binds it into each message's context). */
  readonly syncStates?: ((configId: string, executionId: string) => SyncState) | undefined;
  /** The claims of one execution (the engine binds them into each message's context). */
  readonly executionClaims?: ((executionId: string) => ExecutionClaims) | undefined;
  /** The fan-in of one execution (the engine binds it into each message's context). */
  readonly executionFanIn?: ((executionId: string) => ExecutionFanIn) | undefined;
}

export type AdapterHandler = (
  payload: Record<string, unknown>,
  context: AdapterContext,
) => Promise<Iterable<AdapterOutput> | AsyncIterable<AdapterOutput>>;

export interface AdapterDefinition<Config extends TSchema = TSchema> {
  /** The `type:` used in pipeline YAML. */
  readonly type: string;
  readonly group: AdapterGroup;
  /** One line: what it does. */
  readonly summary: string;
  /** Longer notes: behaviour, failure handling, payload fields. */
  readonly description?: string;
  readonly config: Config;
  /** Payload this adapter reads (spec 2.1 rule 5: the previous message's payload). */
  readonly input: TSchema;
  /** Payload of each output (spec 2.2). */
  readonly output: TSchema;
  /** Emits one message per item, each routed by an explicit destination. */
  readonly fanOut?: boolean;
  /** Ends a route: emits nothing downstream. */
  readonly terminal?: boolean;
  /**
   * Emits at most one message per input message: true, or a function of the step config where
   * the config decides (synthetic_fanout's `count`). Routes may send messages round in a cycle
   * only through such steps unless the config allows fan-out cycles (E216); left out, the
   * adapter is taken to fan out.
   */
  readonly singleOutput?: boolean | ((config: Static<Config>) => boolean);
  /**
   * Accepts batches (a step may then set `batch:`): the payload is then
   * `{batch_id, messages: [{message_id, correlation_id, payload, metadata}]}`.
   */
  readonly batch?: boolean;
  readonly create: (config: Static<Config>, resources: AdapterResources) => AdapterHandler;
  /**
   * What validation can know before a run from the service settings: a share root outside
   * the allowed roots, a model or an LLM profile that is not configured. Runs on a config
   * that passed its schema; each problem becomes a finding of its code.
   */
  readonly checkSettings?: (config: Static<Config>, settings: Readonly<Settings>) => SettingsProblem[];
}

/** A step config that the service settings cannot run (findings E211-E215), or W507. */
export interface SettingsProblem {
  code: 'E211' | 'E212' | 'E213' | 'E214' | 'E215' | 'W507';
  /** Where in the step config, e.g. `['models', 1]`. */
  field: ReadonlyArray<string | number>;
  message: string;
  remediation: string;
}

/**
 * Thrown by a handler to record its input as skipped rather than failed, without retries:
 * for example a page or attachment answering 404 at fetch time (spec 2.3 rule 1). The
 * message is the reason kept in lineage.
 */
export class MessageSkipped extends Error {
  override name = 'MessageSkipped';
}

/**
 * A source step's outputs, unchanged; when there are none, its message is skipped with
 * `reason()` instead, so the execution's outcome (`empty`) says why nothing was done: an empty
 * folder, nothing changed since the last run (docs/engine.md, "Outcomes").
 */
export async function* skipWhenEmpty<T>(
  outputs: AsyncIterable<T> | Iterable<T>,
  reason: () => string,
): AsyncGenerator<T> {
  let count = 0;
  for await (const output of outputs) {
    count++;
    yield output;
  }
  if (count === 0) throw new MessageSkipped(reason());
}

/**
 * A failure that no retry can fix (a configuration, permission or validation problem, a
 * corrupt document): the engine records the message as failed at once instead of retrying it.
 * Any error with `permanent: true` counts, so domain code marks its own error classes without
 * importing this module (ShareAccessError, DocumentError, EgressRefused, ...).
 */
export class PermanentFailure extends Error {
  override name = 'PermanentFailure';
  readonly permanent = true;
}

export function isPermanentFailure(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { permanent?: unknown }).permanent === true;
}

/** Identity function that keeps the config type of a definition for `create`. */
export function defineAdapter<Config extends TSchema>(
  definition: AdapterDefinition<Config>,
): AdapterDefinition<Config> {
  return definition;
}
