import { Type } from 'typebox';
import type { ConceptMap } from '../../consolidation/concept-map.js';
import { defineAdapter } from '../adapter.js';
import { mapCache, registerMap, requireString } from './knowledge-flow.js';

export const conceptMapWriter = defineAdapter({
  type: 'concept_map_writer',
  group: 'knowledge',
  summary: "Make a concept map version the knowledge base's current one, with a readable index.",
  description:
    "Input: concept_map_updater's `{map_key, version}`. Registers the version as the knowledge base's current map " +
    "(in the config's sync state: the next run's knowledge_diff compares against it, once this run has completed, so " +
    'a failed run never becomes the base of the next), and writes `index.md`: every concept with its slug, aliases, ' +
    'sources and whether it changed in this version. Emits `{knowledge_base, map_key, version, index_key, concepts, ' +
    'stale, removed}` for concept_fanout.',
  config: Type.Object({}, { additionalProperties: false }),
  input: Type.Object({ map_key: Type.String(), version: Type.Integer() }),
  output: Type.Object({
    knowledge_base: Type.String(),
    map_key: Type.String(),
    version: Type.Integer(),
    index_key: Type.String(),
    concepts: Type.Integer(),
    stale: Type.Integer(),
    removed: Type.Integer(),
  }),
  create: (_config, resources) => {
    const readMap = mapCache(resources.storage);
    return async (payload, context) => {
      const mapKey = requireString(payload, 'map_key', 'concept_map_writer');
      const map = await readMap(mapKey);
      const index = await context.writeObject('index.md', indexOf(map), { contentType: 'text/markdown' });
      await registerMap(context.syncState, map.name, mapKey, map.version);
      return [
        {
          payload: {
            knowledge_base: map.name,
            map_key: mapKey,
            version: map.version,
            index_key: index.key,
            concepts: Object.keys(map.concepts).length,
            stale: map.stale.length,
            removed: map.removed.length,
          },
        },
      ];
    };
  },
});

function indexOf(map: ConceptMap): string {
  const stale = new Set(map.stale);
  const lines = [
    `# ${map.name}: concept map version ${map.version}`,
    '',
    `${Object.keys(map.concepts).length} concepts from ${Object.keys(map.sources).length} sources; ${map.stale.length} new or changed, ${map.removed.length} removed in this version.`,
    '',
    '| concept | slug | aliases | sources | changed |',
    '|---|---|---|---|---|',
  ];
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  for (const concept of Object.values(map.concepts).sort((a, b) => a.name.localeCompare(b.name)))
    lines.push(
      `| ${cell(concept.name)} | ${concept.slug} | ${cell(concept.aliases.join(', '))} | ${concept.sources.length} | ${stale.has(concept.slug) ? 'yes' : ''} |`,
    );
  if (map.removed.length > 0)
    lines.push('', `Removed: ${map.removed.map((concept) => concept.slug).join(', ')}`);
  return `${lines.join('\n')}\n`;
}
