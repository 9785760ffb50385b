import { Type } from 'typebox';
import {
  type ConceptMap,
  type EmbedNames,
  type MapSource,
  mapDefaults,
  parseConceptMap,
  updateConceptMap,
} from '../../consolidation/concept-map.js';
import { isCorpusWords } from '../../consolidation/corpus-words.js';
import { defineAdapter, PermanentFailure } from '../adapter.js';
import type { SourceDiff } from './knowledge-diff.js';
import { readJson, requireString } from './knowledge-flow.js';

export const conceptMapUpdater = defineAdapter({
  type: 'concept_map_updater',
  group: 'knowledge',
  summary:
    "Apply a run's detections to the last concept map: merge, drop removed sources, mark stale concepts.",
  description:
    "Input: concept_detection's `{diff_key, detections_key}`. Starts from the previous map (the diff names it), drops " +
    'the removed sources, replaces the detections of added and changed sources, and rebuilds the concepts: grouped ' +
    'by normalised name (case, plurals, punctuation), joined through aliases, then by the cosine similarity of their ' +
    "names' embeddings (`embedding_model`, default the first configured); a phrase found in fewer than `min_sources` " +
    'sources or in more than `max_corpus_share` of them is left out; the best `max_concepts` stay. A concept is stale ' +
    'when what its page is written from changed (name, aliases, sources or their content, related concepts); slugs ' +
    'are kept across versions; the corpus word counts detection made (`corpus_words`) are kept in the map for later ' +
    'runs. Writes the new version as `concept-map.json` (format `weir.concept-map/1`, see ' +
    'docs/knowledge.md) and emits `{knowledge_base, map_key, version, previous_map_key, concepts, stale, removed}` ' +
    '(counts) for concept_map_writer.',
  config: Type.Object(
    {
      min_sources: Type.Integer({
        minimum: 1,
        default: mapDefaults.minSources,
        description: 'sources a concept needs',
      }),
      max_corpus_share: Type.Number({
        exclusiveMinimum: 0,
        maximum: 1,
        default: mapDefaults.maxCorpusShare,
        description:
          'a phrase in more than this share of the sources is too common to be a concept (20 sources or more); ' +
          "the default, half, keeps a corpus's main concepts, which many of its pages share",
      }),
      max_concepts: Type.Integer({ minimum: 1, maximum: 100_000, default: mapDefaults.maxConcepts }),
      max_sources_per_concept: Type.Integer({
        minimum: 1,
        maximum: 100,
        default: mapDefaults.maxSourcesPerConcept,
      }),
      related_count: Type.Integer({ minimum: 0, maximum: 20, default: mapDefaults.relatedCount }),
      merge_similar: Type.Boolean({
        default: true,
        description: 'join concepts whose names embed close together',
      }),
      similarity_threshold: Type.Number({ minimum: 0, maximum: 1, default: mapDefaults.similarityThreshold }),
      embedding_model: Type.Optional(
        Type.String({ minLength: 1, description: 'model of embedding_models; default the first' }),
      ),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({ diff_key: Type.String(), detections_key: Type.String() }),
  output: Type.Object({
    knowledge_base: Type.String(),
    map_key: Type.String(),
    version: Type.Integer(),
    previous_map_key: Type.Union([Type.String(), Type.Null()]),
    concepts: Type.Integer(),
    stale: Type.Integer(),
    removed: Type.Integer(),
  }),
  checkSettings: (config, settings) =>
    config.embedding_model &&
    !settings.embedding_models.some((model) => model.name === config.embedding_model)
      ? [
          {
            code: 'E212',
            field: ['embedding_model'],
            message: `embedding model ${config.embedding_model} is not configured`,
            remediation: 'Name a model of the embedding_models setting, or leave embedding_model out.',
          },
        ]
      : [],
  create: (config, resources) => {
    const embedNames: EmbedNames | undefined = config.merge_similar
      ? async (names) => {
          const name = config.embedding_model ?? resources.embedders.defaultModel;
          const embedder = resources.embedders.get(name);
          if (!embedder)
            throw new PermanentFailure(`concept_map_updater: embedding model ${name} is not configured`);
          const vectors: Float32Array[] = [];
          for (let start = 0; start < names.length; start += embedder.maxBatchSize)
            vectors.push(...(await embedder.embed(names.slice(start, start + embedder.maxBatchSize))));
          return vectors;
        }
      : undefined;
    return async (payload, context) => {
      const diff = await readJson<SourceDiff>(
        resources.storage,
        requireString(payload, 'diff_key', 'concept_map_updater'),
        'source diff',
      );
      const detections = await readJson<{ sources?: MapSource[]; corpus_words?: unknown }>(
        resources.storage,
        requireString(payload, 'detections_key', 'concept_map_updater'),
        'detections',
      );
      let previous: ConceptMap | undefined;
      if (diff.previous_map_key) {
        const body = await resources.storage.get(diff.previous_map_key);
        previous = parseConceptMap(body.toString('utf8'), diff.previous_map_key);
      }
      const map = await updateConceptMap(
        previous,
        {
          name: diff.knowledge_base,
          createdAt: resources.now().toISOString(),
          detected: detections.sources ?? [],
          removed: diff.removed,
          corpusWords: isCorpusWords(detections.corpus_words) ? detections.corpus_words : undefined,
        },
        {
          minSources: config.min_sources,
          maxCorpusShare: config.max_corpus_share,
          maxConcepts: config.max_concepts,
          maxSourcesPerConcept: config.max_sources_per_concept,
          relatedCount: config.related_count,
          similarityThreshold: config.similarity_threshold,
        },
        embedNames,
      );
      const info = await context.writeObject('concept-map.json', JSON.stringify(map), {
        contentType: 'application/json',
      });
      return [
        {
          payload: {
            knowledge_base: diff.knowledge_base,
            map_key: info.key,
            version: map.version,
            previous_map_key: diff.previous_map_key,
            concepts: Object.keys(map.concepts).length,
            stale: map.stale.length,
            removed: map.removed.length,
          },
        },
      ];
    };
  },
});
