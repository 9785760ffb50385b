/**
 * Concept detection by a language model: strict JSON, checked against a schema, and every
 * evidence quote checked against the source text. A quote the source does not contain is
 * dropped, and a concept left without evidence is dropped with it: the model may name
 * concepts, but it cannot invent where a source says so.
 */
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import type { LlmProvider } from '../llm/llm.js';
import { askModel, parseJsonAnswer, quote } from '../llm/llm-step.js';
import { slugOf } from './concept-names.js';
import type { DetectedConcept } from './keyphrases.js';
import type { LoadedSource } from './sources.js';

export const LlmConceptsAnswer = Type.Object({
  concepts: Type.Array(
    Type.Object({
      name: Type.String({ minLength: 1, maxLength: 120 }),
      aliases: Type.Optional(Type.Array(Type.String({ maxLength: 120 }), { maxItems: 10 })),
      score: Type.Number({ minimum: 0, maximum: 1 }),
      evidence: Type.Array(
        Type.Object({ heading: Type.Optional(Type.String()), quote: Type.String({ minLength: 1 }) }),
        {
          minItems: 1,
          maxItems: 3,
        },
      ),
    }),
    { maxItems: 50 },
  ),
});

export async function detectConceptsWithModel(
  provider: LlmProvider,
  source: LoadedSource,
  options: { maxConcepts: number; contentCutoff: number },
  signal: AbortSignal,
): Promise<DetectedConcept[]> {
  const text = source.markdown.slice(0, options.contentCutoff);
  const answer = await askModel(
    provider,
    [
      {
        role: 'system',
        content: `List the concepts the document is about (at most ${options.maxConcepts}): named things, methods, settings, terms a reader would look up. For each give a score from 0 to 1 for how central it is, and one to three quotes copied word for word from the document that show it, with the heading they are under. Answer with one JSON object and nothing else: {"concepts":[{"name":"...","aliases":["..."],"score":0.9,"evidence":[{"heading":"...","quote":"..."}]}]}`,
      },
      { role: 'user', content: `# ${source.title}\n\n${text}` },
    ],
    'concept_detection',
    signal,
  );
  const parsed = parseJsonAnswer(answer, 'concept_detection');
  if (!Value.Check(LlmConceptsAnswer, parsed))
    throw new Error(`concept_detection: the answer does not match the concept schema: ${quote(answer)}`);
  const haystack = folded(text);
  return parsed.concepts
    .map((concept) => ({
      slug: slugOf(concept.name),
      name: concept.name.trim(),
      aliases: (concept.aliases ?? []).map((alias) => alias.trim()).filter(Boolean),
      score: concept.score,
      evidence: concept.evidence
        .filter((item) => haystack.includes(folded(item.quote)))
        .map((item) => ({ heading_path: item.heading ? [item.heading] : [], quote: item.quote.trim() })),
    }))
    .filter((concept) => concept.evidence.length > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, options.maxConcepts);
}

/** Case and whitespace folded, markdown marks dropped: a quote matches the text it copies. */
function folded(text: string): string {
  return text
    .toLowerCase()
    .replace(/[*_`#>[\]]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}
