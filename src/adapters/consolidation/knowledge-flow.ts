/**
 * What the knowledge consolidation steps share: the name of the knowledge base every payload
 * carries, where the current concept map is registered (sync state), reading JSON objects,
 * and the concept message that flows from concept_fanout to kbase_writer.
 */
import { Type } from 'typebox';
import { type ConceptMap, parseConceptMap } from '../../consolidation/concept-map.js';
import type { Passage } from '../../consolidation/passages.js';
import type { ObjectStore } from '../../storage/object-store.js';
import { PermanentFailure, type SyncState } from '../adapter.js';

export const knowledgeBaseField = Type.String({
  pattern: '^[a-z0-9][a-z0-9_-]{0,63}$',
  default: 'knowledge',
  description:
    'name of the knowledge base: one config may keep several, each with its own concept map and published pages',
});

/** The knowledge base a payload belongs to (carried from knowledge_diff onwards). */
export function knowledgeBaseOf(payload: Record<string, unknown>, fallback: string): string {
  return typeof payload.knowledge_base === 'string' ? payload.knowledge_base : fallback;
}

const mapScope = (knowledgeBase: string) => `concept-map ${knowledgeBase}`;
const versionKey = (version: number) => `v${String(version).padStart(8, '0')}`;

/** The newest map version of a run that completed; undefined before the first. */
export async function currentMapOf(
  syncState: SyncState,
  knowledgeBase: string,
): Promise<{ map_key: string; version: number } | undefined> {
  const versions = await syncState.settled(mapScope(knowledgeBase));
  let newest: { map_key: string; version: number } | undefined;
  for (const value of versions.values()) {
    const entry = value as { map_key?: unknown; version?: unknown };
    if (
      typeof entry.map_key === 'string' &&
      typeof entry.version === 'number' &&
      entry.version > (newest?.version ?? 0)
    )
      newest = { map_key: entry.map_key, version: entry.version };
  }
  return newest;
}

export async function registerMap(
  syncState: SyncState,
  knowledgeBase: string,
  mapKey: string,
  version: number,
) {
  await syncState.put(mapScope(knowledgeBase), [
    { key: versionKey(version), value: { map_key: mapKey, version } },
  ]);
}

export async function readJson<T>(storage: ObjectStore, key: string, what: string): Promise<T> {
  const info = await storage.stat(key);
  if (!info) throw new PermanentFailure(`${what} ${key} does not exist`);
  try {
    return JSON.parse((await storage.get(key)).toString('utf8')) as T;
  } catch (error) {
    throw new PermanentFailure(`${what} ${key} is not JSON: ${(error as Error).message}`);
  }
}

/** Maps read by many messages of one run (validator, fan-out): the last few, parsed once. */
export function mapCache(storage: ObjectStore, size = 2) {
  const cache = new Map<string, Promise<ConceptMap>>();
  return (key: string): Promise<ConceptMap> => {
    let map = cache.get(key);
    if (!map) {
      map = storage.get(key).then((body) => parseConceptMap(body.toString('utf8'), key));
      map.catch(() => cache.delete(key));
      cache.set(key, map);
      while (cache.size > size) cache.delete(cache.keys().next().value as string);
    }
    return map;
  };
}

export const requireString = (payload: Record<string, unknown>, field: string, adapter: string): string => {
  const value = payload[field];
  if (typeof value !== 'string' || value.length === 0)
    throw new PermanentFailure(`${adapter}: the input needs a \`${field}\` string`);
  return value;
};

/** A concept as concept_fanout sends it on. */
export const ConceptMessage = Type.Object({
  slug: Type.String(),
  name: Type.String(),
  aliases: Type.Array(Type.String()),
  sources: Type.Array(
    Type.Object({
      source_id: Type.String(),
      key: Type.String(),
      title: Type.Union([Type.String(), Type.Null()]),
      url: Type.Union([Type.String(), Type.Null()]),
      score: Type.Number(),
      evidence: Type.Optional(
        Type.Array(Type.Object({ heading_path: Type.Array(Type.String()), quote: Type.String() })),
      ),
    }),
  ),
  related: Type.Array(Type.Object({ slug: Type.String(), name: Type.String() })),
});

export interface ConceptPayload {
  knowledge_base: string;
  map_key: string;
  map_version: number;
  concepts_total?: number;
  concept?: {
    slug: string;
    name: string;
    aliases: string[];
    sources: {
      source_id: string;
      key: string;
      title: string | null;
      url: string | null;
      score: number;
      evidence?: { heading_path: string[]; quote: string }[];
    }[];
    related: { slug: string; name: string }[];
  };
  /** A concept the new map no longer has: its page is to be taken down. */
  removed?: { slug: string; name: string };
  passages?: Passage[];
  page?: { markdown: string; content_hash: string; synthesized_by: string };
}

export const conceptFlowFields = {
  knowledge_base: Type.String(),
  map_key: Type.String(),
  map_version: Type.Integer(),
  /** Messages concept_fanout sent for this map version (concept_link_resolver's fan-in). */
  concepts_total: Type.Optional(Type.Integer({ minimum: 1 })),
  concept: Type.Optional(ConceptMessage),
  removed: Type.Optional(Type.Object({ slug: Type.String(), name: Type.String() })),
};

/** A passage of a concept's sources (concept_source_loader). */
export const PassageSchema = Type.Object({
  citation: Type.Integer({ minimum: 1 }),
  source_id: Type.String(),
  key: Type.String(),
  title: Type.String(),
  url: Type.Union([Type.String(), Type.Null()]),
  heading_path: Type.Array(Type.String()),
  text: Type.String(),
});

/** A concept's page (batch_synthesizer). */
export const PageSchema = Type.Object({
  markdown: Type.String(),
  content_hash: Type.String(),
  synthesized_by: Type.String(),
});

/** A concept message once its passages are loaded, and its page once written. */
export const pageFlowFields = {
  ...conceptFlowFields,
  passages: Type.Optional(Type.Array(PassageSchema)),
  page: Type.Optional(PageSchema),
};

export function conceptPayloadOf(payload: Record<string, unknown>, adapter: string): ConceptPayload {
  if (typeof payload.map_key !== 'string' || (payload.concept === undefined && payload.removed === undefined))
    throw new PermanentFailure(
      `${adapter}: the input needs \`map_key\` and a \`concept\` or \`removed\` (from concept_fanout)`,
    );
  return payload as unknown as ConceptPayload;
}
