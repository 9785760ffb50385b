import { Type } from 'typebox';
import { stringify } from 'yaml';
import { identifierKinds, redactIdentifiers } from '../../redaction/identifiers.js';
import { toSearchLanguage } from '../../search-index/language.js';
import { loadLanguageDetector } from '../../search-index/language-detection.js';
import { defineAdapter } from '../adapter.js';
import { IndexerResult } from './conv-routine-indexer.js';
import { requireString, routed } from './shared.js';

const TYPE = 'conv_routine_renderer';

export const RenderedRoutine = Type.Object({
  routine_id: Type.String(),
  markdown: Type.String({ description: 'the routine as markdown, without the front matter' }),
  front_matter: Type.Object(
    {
      routine_id: Type.String(),
      title: Type.String(),
      topic: Type.String(),
      cluster_id: Type.String(),
      package_id: Type.String(),
      steps: Type.Integer(),
      conversations: Type.Integer({
        description: 'supporting conversations, of every package that found it',
      }),
      sources: Type.Array(
        Type.Object({ package_id: Type.String(), conversations: Type.Integer({ minimum: 0 }) }),
        { description: 'per package that found the routine, how many of its conversations follow it' },
      ),
      method: Type.String(),
      language: Type.String(),
    },
    { description: 'also written as the YAML header by conv_routine_writer' },
  ),
});

interface IndexedRoutine {
  routine_id: string;
  cluster_id: string;
  topic: string;
  title: string;
  steps: Array<{ text: string; support: number }>;
  preconditions: string[];
  outcome: string | null;
  conversation_ids: string[];
  method: string;
  /** Every package of the run that found it (conv_routine_indexer); absent, the one package. */
  sources?: Array<{ package_id: string; conversation_ids: string[] }>;
}

export const convRoutineRenderer = defineAdapter({
  type: TYPE,
  group: 'routines',
  summary: 'Render each routine as markdown with front matter; one message per routine (fan-out).',
  description:
    'Per routine of conv_routine_indexer: a markdown page (title, preconditions, numbered steps, outcome, how many ' +
    'conversations follow it, and a Sources section citing each package that found it with its conversation ids) ' +
    'and its front matter `{routine_id, title, topic, cluster_id, package_id, steps, conversations, sources, method, ' +
    "language}`; the language is detected from the text (the knowledge index's detector). " +
    'Sets metadata.document `{source_key: "routine:<routine_id>", title, language}`, so smart_segmenter -> ' +
    'embedding_generator index it as one document per routine id (a later run replaces it, never duplicates it) and ' +
    'chat cites it by title. Emits `{routine_id, markdown, front_matter}` per routine.',
  config: Type.Object(
    {
      fallback_language: Type.String({
        minLength: 1,
        default: 'norwegian',
        description: 'search language when the text does not tell',
      }),
    },
    { additionalProperties: false },
  ),
  input: IndexerResult,
  output: RenderedRoutine,
  fanOut: true,
  create: (config) => async (payload, context) => {
    const packageId = requireString(payload, 'package_id', TYPE);
    if (!Array.isArray(payload.routines))
      throw new Error(`${TYPE}: input needs \`routines\` (conv_routine_indexer)`);
    const detector = await loadLanguageDetector();
    return (payload.routines as IndexedRoutine[]).map((routine) => {
      // Whatever ran before (an LLM that ignored its instructions included), no personal
      // identifier reaches a routine page.
      const markdown = redactIdentifiers(
        renderRoutine(routine, packageId),
        identifierKinds,
        '[REDACTED:{kind}]',
      ).text;
      const title = redactIdentifiers(routine.title, identifierKinds, '[REDACTED:{kind}]').text;
      const language = detector.document(markdown, toSearchLanguage(config.fallback_language) ?? 'simple');
      const frontMatter = {
        routine_id: routine.routine_id,
        title,
        topic: routine.topic,
        cluster_id: routine.cluster_id,
        package_id: packageId,
        steps: routine.steps.length,
        conversations: routine.conversation_ids.length,
        sources: sourcesOf(routine, packageId).map((source) => ({
          package_id: source.package_id,
          conversations: source.conversation_ids.length,
        })),
        method: routine.method,
        language,
      };
      return {
        ...routed(context, { routine_id: routine.routine_id, markdown, front_matter: frontMatter }),
        metadata: {
          document: {
            source_key: `routine:${routine.routine_id}`,
            url: null,
            title: routine.title,
            language,
          },
        },
      };
    });
  },
});

export function renderRoutine(routine: IndexedRoutine, packageId: string): string {
  const lines = [`# ${routine.title}`, ''];
  if (routine.preconditions.length > 0) {
    lines.push('## Before you start', '', ...routine.preconditions.map((text) => `- ${text}`), '');
  }
  lines.push('## Steps', '', ...routine.steps.map((step, index) => `${index + 1}. ${step.text}`), '');
  if (routine.outcome) lines.push('## Outcome', '', routine.outcome, '');
  lines.push(`Followed in ${routine.conversation_ids.length} conversations about ${routine.topic}.`, '');
  const sources = sourcesOf(routine, packageId);
  lines.push(
    '## Sources',
    '',
    ...sources.map(
      (source) =>
        `- Package ${source.package_id}, ${source.conversation_ids.length} conversations: ${source.conversation_ids.map((id) => `\`${id}\``).join(', ')}`,
    ),
    '',
  );
  return lines.join('\n');
}

function sourcesOf(
  routine: IndexedRoutine,
  packageId: string,
): Array<{ package_id: string; conversation_ids: string[] }> {
  return routine.sources && routine.sources.length > 0
    ? routine.sources
    : [{ package_id: packageId, conversation_ids: routine.conversation_ids }];
}

/** The page with its front matter as a YAML header (conv_routine_writer). */
export function withFrontMatter(markdown: string, frontMatter: Record<string, unknown>): string {
  return `---\n${stringify(frontMatter).trimEnd()}\n---\n\n${markdown}`;
}
