import { Type } from 'typebox';
import { defineAdapter } from '../adapter.js';
import { conceptFlowFields, mapCache, requireString } from './knowledge-flow.js';

export const conceptFanout = defineAdapter({
  type: 'concept_fanout',
  group: 'knowledge',
  summary: 'One message per concept of a map (by default only the stale ones, and the removed ones).',
  description:
    'Input: `{map_key}` (concept_map_writer). Emits `{knowledge_base, map_key, map_version, concept: {slug, name, ' +
    'aliases, sources: [{source_id, key, title, url, score, evidence: [{heading_path, quote}]}], related: [{slug, name}]}}` per concept, best first, to ' +
    'the step destination (fan-out). With `only_stale` (default) only the concepts new or changed in this version: an ' +
    'untouched concept is not written again. With `include_removed` (default) a concept the map no longer has is sent ' +
    'as `{knowledge_base, map_key, map_version, removed: {slug, name}}`, which the later steps pass on so kbase_writer ' +
    'takes its page down. Every message carries `concepts_total` (how many this version sent), for concept_link_resolver.',
  config: Type.Object(
    {
      only_stale: Type.Boolean({
        default: true,
        description: 'only concepts new or changed in this map version',
      }),
      include_removed: Type.Boolean({
        default: true,
        description: 'also send the concepts this version removed',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({ map_key: Type.String() }),
  output: Type.Object(conceptFlowFields),
  fanOut: true,
  create: (config, resources) => {
    const readMap = mapCache(resources.storage);
    return async (payload) => {
      const mapKey = requireString(payload, 'map_key', 'concept_fanout');
      const map = await readMap(mapKey);
      const stale = new Set(map.stale);
      const base = { knowledge_base: map.name, map_key: mapKey, map_version: map.version };
      const concepts = Object.values(map.concepts)
        .filter((concept) => !config.only_stale || stale.has(concept.slug))
        .sort((a, b) => b.score - a.score || a.slug.localeCompare(b.slug));
      const outputs = concepts.map((concept) => ({
        payload: {
          ...base,
          concept: {
            slug: concept.slug,
            name: concept.name,
            aliases: concept.aliases,
            sources: concept.sources.map((entry) => {
              const source = map.sources[entry.source_id];
              return {
                source_id: entry.source_id,
                key: source?.key ?? entry.source_id,
                title: source?.title ?? null,
                url: source?.url ?? null,
                score: entry.score,
                evidence: entry.evidence,
              };
            }),
            related: concept.related
              .filter((slug) => map.concepts[slug])
              .map((slug) => ({ slug, name: map.concepts[slug]?.name ?? slug })),
          },
        },
      }));
      const removed = config.include_removed
        ? map.removed.map((concept) => ({ payload: { ...base, removed: concept } }))
        : [];
      // Every message says how many the version has, so concept_link_resolver knows when all arrived.
      const all = [...outputs, ...removed];
      return all.map((output) => ({ payload: { ...output.payload, concepts_total: all.length } }));
    };
  },
});
