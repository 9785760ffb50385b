import { Type } from 'typebox';
import type { MapSource } from '../../consolidation/concept-map.js';
import { type CorpusWords, corpusWordsOf, isCorpusWords } from '../../consolidation/corpus-words.js';
import { type DetectedConcept, detectConcepts, detectionDefaults } from '../../consolidation/keyphrases.js';
import { detectConceptsWithModel } from '../../consolidation/llm-concepts.js';
import {
  type LoadedSource,
  loadSource,
  type SourceEntry,
  SourceMissing,
} from '../../consolidation/sources.js';
import { checkLlmProfile, optionalLlmProvider } from '../../llm/llm-step.js';
import { defineAdapter, PermanentFailure } from '../adapter.js';
import type { SourceDiff } from './knowledge-diff.js';
import { readJson } from './knowledge-flow.js';

const Evidence = Type.Object({ heading_path: Type.Array(Type.String()), quote: Type.String() });
export const DetectedConceptSchema = Type.Object({
  slug: Type.String(),
  name: Type.String(),
  aliases: Type.Array(Type.String()),
  score: Type.Number(),
  evidence: Type.Array(Evidence),
});

export const conceptDetection = defineAdapter({
  type: 'concept_detection',
  group: 'knowledge',
  summary: 'Find the concepts of each source: name, aliases, score and evidence (heading path and quote).',
  description:
    'Offline (no `llm_profile`): keyphrases in the manner of RAKE/YAKE in English and Norwegian: runs of words between ' +
    'stop words, the title and headings, scored by frequency, position and length; acronyms join their expansion ' +
    '("Write-Ahead Logging (WAL)"). A name ends on a noun: verbs (words the page uses more often in a verb\'s ' +
    "position than in a noun's), prepositions, adverbs, colours and common adjectives end or break a phrase, general " +
    'nouns ("end", "day") are none alone, inline code that names nothing (a field name, a path, a payload shape) is ' +
    'left out, a single word that heads a longer phrase of the page gives way to it, and a single word is weighed ' +
    "down by the share of the corpus's sources using it (none when 3 in 4 do): counted over the run's sources when " +
    'they are most of the corpus, else taken from the previous concept map. With `llm_profile` (an openai profile): the model lists the concepts as strict JSON, ' +
    'checked against a schema, and every evidence quote is checked against the source: a quote the source does not ' +
    'contain is dropped, and a concept without evidence with it. Input `{diff_key}` (knowledge_diff): detects the ' +
    'added and changed sources, writes `detections.json` (`{sources: [{source_id, key, content_hash, title, url, ' +
    'created_at, detected: [concept]}], corpus_words?: {documents, counts}}`) and emits `{knowledge_base, diff_key, detections_key, sources, concepts}`. ' +
    'Input `{key}` (one stored object, e.g. from storage_enumerator): emits `{key, source_id, title, concepts: ' +
    '[{slug, name, aliases, score, evidence: [{heading_path, quote}]}]}`. A source that is gone since it was listed ' +
    'is left out.',
  config: Type.Object(
    {
      max_concepts_per_source: Type.Integer({
        minimum: 1,
        maximum: 50,
        default: detectionDefaults.maxConcepts,
        description:
          "concepts kept per source; 16 (was 8) so that enough of a source's specific phrases reach the map, which keeps those two sources share",
      }),
      llm_profile: Type.Optional(
        Type.String({
          minLength: 1,
          description: 'an openai profile of llm_profiles: detect with the model',
        }),
      ),
      content_cutoff: Type.Integer({
        minimum: 100,
        maximum: 200_000,
        default: 12_000,
        description: 'characters of a source sent to the model',
      }),
      model_concurrency: Type.Integer({
        minimum: 1,
        maximum: 32,
        default: 4,
        description: 'model calls at once',
      }),
      max_source_bytes: Type.Integer({
        minimum: 1,
        default: 5_000_000,
        description: 'larger sources are left out',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Union([Type.Object({ diff_key: Type.String() }), Type.Object({ key: Type.String() })]),
  output: Type.Union([
    Type.Object({
      knowledge_base: Type.String(),
      diff_key: Type.String(),
      detections_key: Type.String(),
      sources: Type.Integer(),
      concepts: Type.Integer(),
    }),
    Type.Object({
      key: Type.String(),
      source_id: Type.String(),
      title: Type.String(),
      concepts: Type.Array(DetectedConceptSchema),
    }),
  ]),
  checkSettings: checkLlmProfile,
  create: (config, resources) => {
    const provider = optionalLlmProvider(resources.settings, config.llm_profile, 'concept_detection');
    const detect = async (
      source: LoadedSource,
      signal: AbortSignal,
      corpus?: CorpusWords,
    ): Promise<DetectedConcept[]> =>
      provider
        ? detectConceptsWithModel(
            provider,
            source,
            { maxConcepts: config.max_concepts_per_source, contentCutoff: config.content_cutoff },
            signal,
          )
        : detectConcepts(source, { maxConcepts: config.max_concepts_per_source, corpus });
    /**
     * The corpus's word counts: from this run's sources when they are most of the corpus (a
     * first run, a large re-run), else the previous map's, so a run that detects a few changed
     * sources weighs words as the run that counted them did.
     */
    const corpusWordsFor = async (diff: SourceDiff, sources: LoadedSource[]) => {
      const listed = diff.added.length + diff.changed.length + diff.unchanged.length;
      const counted = sources.length * 2 >= listed ? corpusWordsOf(sources) : undefined;
      if (counted || !diff.previous_map_key) return counted;
      const previous = await readJson<{ corpus_words?: unknown }>(
        resources.storage,
        diff.previous_map_key,
        'concept map',
      );
      return isCorpusWords(previous.corpus_words) ? previous.corpus_words : corpusWordsOf(sources);
    };
    const load = async (entry: Pick<SourceEntry, 'source_id' | 'key' | 'title' | 'url'>) => {
      try {
        return await loadSource(resources.storage, entry, config.max_source_bytes);
      } catch (error) {
        if (error instanceof SourceMissing || /over the \d+ limit/.test((error as Error).message))
          return undefined;
        throw error;
      }
    };

    return async (payload, context) => {
      if (typeof payload.key === 'string') {
        const info = await resources.storage.stat(payload.key);
        if (!info) throw new PermanentFailure(`concept_detection: ${payload.key} does not exist`);
        const source = await load({
          source_id: (info.metadata.url as string | undefined) ?? payload.key,
          key: payload.key,
          title: (info.metadata.title as string | undefined) ?? null,
          url: (info.metadata.url as string | undefined) ?? null,
        });
        if (!source) throw new PermanentFailure(`concept_detection: ${payload.key} cannot be read`);
        const concepts = await detect(source, context.signal);
        return [
          { payload: { key: payload.key, source_id: source.source_id, title: source.title, concepts } },
        ];
      }
      if (typeof payload.diff_key !== 'string')
        throw new PermanentFailure('concept_detection: the input needs `diff_key` (knowledge_diff) or `key`');
      const diff = await readJson<SourceDiff>(resources.storage, payload.diff_key, 'source diff');
      const entries = [...diff.added, ...diff.changed];
      const loaded: (LoadedSource | undefined)[] = new Array(entries.length);
      const detected: (MapSource | undefined)[] = new Array(entries.length);
      const inTurns = async (work: (index: number) => Promise<void>) => {
        let next = 0;
        const worker = async () => {
          while (next < entries.length) await work(next++);
        };
        await Promise.all(Array.from({ length: provider ? config.model_concurrency : 1 }, worker));
      };
      await inTurns(async (index) => {
        loaded[index] = await load(entries[index] as SourceEntry);
      });
      const corpusWords = provider
        ? undefined
        : await corpusWordsFor(
            diff,
            loaded.filter((source): source is LoadedSource => source !== undefined),
          );
      await inTurns(async (index) => {
        const source = loaded[index];
        if (!source) return;
        const entry = entries[index] as SourceEntry;
        const concepts = await detect(source, context.signal, corpusWords);
        detected[index] = { ...entry, title: entry.title ?? source.title, detected: concepts };
        // Read once: the text is not needed after detection.
        loaded[index] = undefined;
      });
      const sources = detected.filter((source): source is MapSource => source !== undefined);
      const info = await context.writeObject(
        'detections.json',
        JSON.stringify({ sources, ...(corpusWords ? { corpus_words: corpusWords } : {}) }),
        { contentType: 'application/json' },
      );
      return [
        {
          payload: {
            knowledge_base: diff.knowledge_base,
            diff_key: payload.diff_key,
            detections_key: info.key,
            sources: sources.length,
            concepts: sources.reduce((sum, source) => sum + source.detected.length, 0),
          },
        },
      ];
    };
  },
});
