import { Type } from 'typebox';
import { jaccardOf, routineId, routineTerms } from '../../conversations/routines.js';
import { type AdapterContext, defineAdapter } from '../adapter.js';
import { RoutineSchema } from './conv-routine-discovery.js';
import { packageFields, requireString } from './shared.js';

const TYPE = 'conv_routine_indexer';
const SCOPE = 'conv_routines';
/** What each package of a run contributed to a routine, under `<routine_id>@<package_id>`. */
const SOURCES_SCOPE = 'conv_routine_sources';

const RoutineSource = Type.Object({
  package_id: Type.String(),
  conversation_ids: Type.Array(Type.String()),
});

export const IndexedRoutine = Type.Object({
  ...RoutineSchema.properties,
  routine_id: Type.String({
    description: 'stable across runs: the id of the known routine it matches, else a hash of its steps',
  }),
  known: Type.Boolean({ description: 'an earlier run of this pipeline config had it' }),
  merged_from: Type.Array(Type.String(), { description: 'clusters whose routines merged into this one' }),
  sources: Type.Array(RoutineSource, {
    description:
      'every package of this run that found the routine, with its conversations; `conversation_ids` is their union',
  }),
});

export const IndexerResult = Type.Object({
  package_id: packageFields.package_id,
  routines: Type.Array(IndexedRoutine),
});

interface Discovered {
  cluster_id: string;
  steps: Array<{ text: string; support: number }>;
  conversation_ids: string[];
  [field: string]: unknown;
}

export const convRoutineIndexer = defineAdapter({
  type: TYPE,
  group: 'routines',
  summary: 'Merge near-identical routines and give each a stable id across runs.',
  description:
    'Two routines whose step terms overlap by at least `merge_similarity` (Jaccard) are one: the one with more ' +
    'supporting conversations is kept, the supports add up and `merged_from` lists the clusters. Each routine is then ' +
    'matched against the routines earlier runs of the same pipeline config indexed (sync state scope ' +
    '`conv_routines`): a match at `merge_similarity` keeps the known id, so a routine re-found with slightly ' +
    'different steps, or in a re-run, keeps its id and its knowledge-index document; otherwise the id is a hash of ' +
    'its step terms. The same routine found by several packages of one run (a ChatGPT export and a Slack export) is ' +
    'one: each package records what it found (sync state scope `conv_routine_sources`), and the routine carries the ' +
    'conversations of every package indexed so far in the run, each step its summed support, and `sources` per ' +
    'package, so the page written last counts and cites them all. Emits `{package_id, routines: [{routine_id, known, ' +
    'merged_from, sources, ...the discovered routine}]}`.',
  config: Type.Object(
    {
      merge_similarity: Type.Number({
        minimum: 0.1,
        maximum: 1,
        default: 0.6,
        description: 'step-term Jaccard',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({ package_id: packageFields.package_id, routines: Type.Array(RoutineSchema) }),
  output: IndexerResult,
  create: (config) => async (payload, context) => {
    const packageId = requireString(payload, 'package_id', TYPE);
    if (!Array.isArray(payload.routines))
      throw new Error(`${TYPE}: input needs \`routines\` (conv_routine_discovery)`);
    const discovered = [...(payload.routines as Discovered[])].sort(
      (a, b) =>
        b.conversation_ids.length - a.conversation_ids.length || (a.cluster_id < b.cluster_id ? -1 : 1),
    );
    const merged: Array<Discovered & { terms: Set<string>; merged_from: string[] }> = [];
    for (const routine of discovered) {
      const terms = routineTerms(routine.steps);
      const into = merged.find((candidate) => jaccardOf(candidate.terms, terms) >= config.merge_similarity);
      if (!into) {
        merged.push({ ...routine, terms, merged_from: [routine.cluster_id] });
        continue;
      }
      into.merged_from.push(routine.cluster_id);
      into.conversation_ids = [...new Set([...into.conversation_ids, ...routine.conversation_ids])].sort();
      into.steps = into.steps.map((step, index) => ({
        ...step,
        support: step.support + (routine.steps[index]?.support ?? 0),
      }));
    }
    const known = await context.syncState.all(SCOPE);
    const knownTerms = [...known].map(([id, value]) => ({
      id,
      terms: new Set(Array.isArray(value.terms) ? (value.terms as string[]) : []),
    }));
    const used = new Set<string>();
    const identified = merged.map(({ terms, ...routine }) => {
      const match = knownTerms
        .map((candidate) => ({ id: candidate.id, score: jaccardOf(candidate.terms, terms) }))
        .filter((candidate) => candidate.score >= config.merge_similarity && !used.has(candidate.id))
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))[0];
      const id = match?.id ?? routineId(routine.steps);
      used.add(id);
      return { ...routine, routine_id: id, known: match !== undefined, terms };
    });
    const routines = await withOtherPackages(identified, packageId, context);
    await context.syncState.put(
      SCOPE,
      routines.map((routine) => ({
        key: routine.routine_id,
        value: {
          terms: [...routine.terms].sort(),
          title: String((routine as Record<string, unknown>).title ?? ''),
        },
      })),
    );
    return [
      {
        payload: {
          package_id: packageId,
          routines: routines.map(({ terms: _terms, ...routine }) => routine),
        },
      },
    ];
  },
});

interface SourceRecord {
  execution_id: string;
  package_id: string;
  conversation_ids: string[];
  steps: Array<{ text: string; support: number }>;
}

/**
 * Each routine with what the other packages of this run found of it: this package's part is
 * recorded first, then every part of the run is read back, so whichever package is indexed
 * last carries them all. Parts of earlier runs are left out (their exports may be gone).
 */
async function withOtherPackages<
  R extends {
    routine_id: string;
    conversation_ids: string[];
    steps: Array<{ text: string; support: number }>;
  },
>(
  routines: R[],
  packageId: string,
  context: AdapterContext,
): Promise<Array<R & { sources: Array<{ package_id: string; conversation_ids: string[] }> }>> {
  const own = routines.map((routine) => ({
    key: `${routine.routine_id}@${packageId}`,
    value: {
      execution_id: context.executionId,
      package_id: packageId,
      conversation_ids: routine.conversation_ids,
      steps: routine.steps,
    } satisfies SourceRecord,
  }));
  if (own.length === 0) return [];
  await context.syncState.put(SOURCES_SCOPE, own);
  const recorded = await context.syncState.all(SOURCES_SCOPE);
  return routines.map((routine) => {
    const parts = [...recorded]
      .filter(
        ([key, value]) =>
          key.startsWith(`${routine.routine_id}@`) && value.execution_id === context.executionId,
      )
      .map(([, value]) => value as unknown as SourceRecord)
      .sort((a, b) => (a.package_id < b.package_id ? -1 : 1));
    const others = parts.filter((part) => part.package_id !== packageId);
    const steps = routine.steps.map((step) => {
      const stepTerms = routineTerms([step]);
      // Another package's phrasing of the step: the one sharing the most terms.
      const support = others.reduce((sum, part) => {
        const best = part.steps
          .map((candidate) => ({ candidate, score: jaccardOf(stepTerms, routineTerms([candidate])) }))
          .sort((a, b) => b.score - a.score)[0];
        return sum + (best && best.score >= 0.3 ? best.candidate.support : 0);
      }, step.support);
      return { ...step, support };
    });
    const conversationIds = [...new Set(parts.flatMap((part) => part.conversation_ids))].sort();
    return {
      ...routine,
      steps,
      conversation_ids: conversationIds,
      sources: parts.map(({ package_id, conversation_ids }) => ({ package_id, conversation_ids })),
    };
  });
}
