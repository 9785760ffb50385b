/**
 * Helpers for adapter unit tests: a handler run outside the engine with real resources
 * (a temporary filesystem object store, an in-memory PGlite knowledge index when asked for)
 * and a context whose `writeObject` writes where the engine would (`<execution>/<stage>/<path>`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Database, openDatabase } from '../db/database.js';
import { createStorageCatalogueRepository } from '../db/storage-catalogue-repository.js';
import { createEmbeddersFromSettings } from '../embedding/embedders.js';
import { createKnowledgeIndex, type KnowledgeIndex } from '../search-index/knowledge-index.js';
import { loadSettings, type Settings } from '../settings.js';
import { createFilesystemObjectStore } from '../storage/fs.js';
import type { ObjectStore } from '../storage/object-store.js';
import type {
  AdapterContext,
  AdapterOutput,
  AdapterResources,
  ExecutionClaims,
  ExecutionFanIn,
  SyncState,
} from './adapter.js';

export interface AdapterTestKit {
  resources: AdapterResources;
  storage: ObjectStore;
  /** Open only when `withDatabase` was set. */
  database: Database | undefined;
  context(overrides?: Partial<AdapterContext>): AdapterContext;
  close(): Promise<void>;
}

const unavailableKnowledge: KnowledgeIndex = new Proxy({} as KnowledgeIndex, {
  get: () => async () => {
    throw new Error('this test kit has no database: createAdapterTestKit({ withDatabase: true })');
  },
});

export async function createAdapterTestKit(
  options: { withDatabase?: boolean; settings?: Partial<Settings> } = {},
): Promise<AdapterTestKit> {
  const directory = await mkdtemp(path.join(tmpdir(), 'weir-adapter-'));
  const storage = createFilesystemObjectStore(directory);
  const database = options.withDatabase ? await openDatabase({}) : undefined;
  const settings = loadSettings({}, options.settings);
  let counter = 0;
  const syncState = memorySyncState();
  const claims = memoryClaims();
  const fanIn = memoryFanIn();
  const resources: AdapterResources = {
    now: () => new Date(),
    newId: () => `00000000-0000-7000-8000-${String(++counter).padStart(12, '0')}`,
    storage,
    knowledge: database ? createKnowledgeIndex(database.db) : unavailableKnowledge,
    storageCatalogue: database ? createStorageCatalogueRepository(database.db) : undefined,
    embedders: createEmbeddersFromSettings(settings.embedding_models),
    settings,
  };
  return {
    resources,
    storage,
    database,
    context(overrides = {}) {
      const base = {
        executionId: '00000000-0000-7000-8000-0000000000e1',
        routeId: 'route',
        stage: 'stage',
        messageId: `message-${++counter}`,
        correlationId: 'correlation',
        metadata: {},
        batchId: undefined,
        destination: undefined,
        signal: new AbortController().signal,
        syncState,
        claims,
        fanIn,
        ...overrides,
      };
      return {
        ...base,
        writeObject: (objectPath, body, writeOptions) =>
          storage.put(`${base.executionId}/${base.stage}/${objectPath}`, body, {
            ...(writeOptions?.contentType ? { contentType: writeOptions.contentType } : {}),
            metadata: { ...writeOptions?.metadata, execution_id: base.executionId, stage: base.stage },
          }),
        ...overrides,
      } satisfies AdapterContext;
    },
    async close() {
      await database?.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** Every output of a handler call, sync or async iterable alike. */
export async function collectOutputs(
  outputs: Iterable<AdapterOutput> | AsyncIterable<AdapterOutput>,
): Promise<AdapterOutput[]> {
  const all: AdapterOutput[] = [];
  for await (const output of outputs) all.push(output);
  return all;
}

/** Sync state in memory for unit tests: every value written counts as settled at once. */
export function memorySyncState(): SyncState {
  const scopes = new Map<string, Map<string, Record<string, unknown>>>();
  const scopeOf = (scope: string) => {
    const items = scopes.get(scope) ?? new Map<string, Record<string, unknown>>();
    scopes.set(scope, items);
    return items;
  };
  return {
    settled: async (scope) => new Map(scopeOf(scope)),
    all: async (scope) => new Map(scopeOf(scope)),
    async put(scope, items) {
      for (const item of items) scopeOf(scope).set(item.key, item.value);
    },
    async remove(scope, keys) {
      for (const key of keys) scopeOf(scope).delete(key);
    },
  };
}

/** Execution claims in memory for unit tests (one execution). */
export function memoryClaims(): ExecutionClaims {
  const scopes = new Map<string, Set<string>>();
  return {
    async claim(scope, keys, limit = Number.MAX_SAFE_INTEGER) {
      const held = scopes.get(scope) ?? new Set<string>();
      scopes.set(scope, held);
      const claimed = new Set<string>();
      for (const key of keys) {
        if (held.has(key) || held.size >= limit) continue;
        held.add(key);
        claimed.add(key);
      }
      return claimed;
    },
  };
}

/** Fan-in in memory for unit tests (one execution), with the database version's rules. */
export function memoryFanIn(): ExecutionFanIn {
  const groups = new Map<string, { arrivals: Map<string, Record<string, unknown>>; completedBy?: string }>();
  return {
    async arrive(group, item, value, total) {
      const state: { arrivals: Map<string, Record<string, unknown>>; completedBy?: string } = groups.get(
        group,
      ) ?? {
        arrivals: new Map(),
      };
      groups.set(group, state);
      if (!state.arrivals.has(item)) state.arrivals.set(item, value);
      if (state.completedBy === undefined && state.arrivals.size >= total) state.completedBy = item;
      if (state.completedBy !== item) return undefined;
      return [...state.arrivals]
        .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
        .map(([key, stored]) => ({ item: key, value: stored }));
    },
  };
}
