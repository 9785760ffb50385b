/**
 * Concept pages written by a language model: several concepts per call, each with its own
 * numbered passages; the model answers strict JSON (one object per concept: summary,
 * sections of paragraphs, each paragraph with the passage numbers it rests on), checked
 * against a schema before a page is made of it. A concept the answer leaves out or gets
 * wrong is written extractively instead, so no concept is left without a sourced page.
 */
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import type { ChatMessage, LlmProvider } from '../llm/llm.js';
import { askModel, parseJsonAnswer } from '../llm/llm-step.js';
import type { PageDraft, RelatedLink } from './concept-page.js';
import { sourceLabel } from './concept-page.js';
import type { Passage } from './passages.js';

export interface ConceptToWrite {
  slug: string;
  name: string;
  aliases: readonly string[];
  passages: readonly Passage[];
  related: readonly RelatedLink[];
}

const Paragraph = Type.Object({
  text: Type.String({ minLength: 1, maxLength: 4000 }),
  citations: Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1, maxItems: 12 }),
});

export const LlmPagesAnswer = Type.Object({
  pages: Type.Array(
    Type.Object({
      slug: Type.String(),
      summary: Paragraph,
      sections: Type.Array(
        Type.Object({
          heading: Type.String({ minLength: 1, maxLength: 200 }),
          paragraphs: Type.Array(Paragraph),
        }),
        { maxItems: 12 },
      ),
    }),
  ),
});

const instructions = `You write concept pages for a knowledge base, only from the numbered passages given for each concept.
Rules:
- Every paragraph states only what its cited passages say, and cites them by number in "citations".
- Cite only the passage numbers listed for that concept.
- Write a one- or two-sentence summary, then 1 to 4 sections of short paragraphs.
- Write in the language of the passages.
Answer with one JSON object and nothing else:
{"pages":[{"slug":"<slug>","summary":{"text":"...","citations":[1]},"sections":[{"heading":"...","paragraphs":[{"text":"...","citations":[1,2]}]}]}]}`;

export function pagePrompt(concepts: readonly ConceptToWrite[]): ChatMessage[] {
  const blocks = concepts.map((concept) => {
    const passages = concept.passages
      .map((passage) => `[${passage.citation}] (${sourceLabel(passage)})\n${passage.text}`)
      .join('\n\n');
    const aliases = concept.aliases.length > 0 ? ` (also: ${concept.aliases.join(', ')})` : '';
    return `### Concept slug=${concept.slug}: ${concept.name}${aliases}\n\n${passages}`;
  });
  return [
    { role: 'system', content: instructions },
    { role: 'user', content: blocks.join('\n\n---\n\n') },
  ];
}

/** Drafts by slug for the concepts the model answered well; the others are missing. */
export async function writePagesWithModel(
  provider: LlmProvider,
  concepts: readonly ConceptToWrite[],
  signal: AbortSignal,
): Promise<{ drafts: Map<string, PageDraft>; problems: Map<string, string> }> {
  const answer = await askModel(provider, pagePrompt(concepts), 'batch_synthesizer', signal);
  const drafts = new Map<string, PageDraft>();
  const problems = new Map<string, string>();
  let parsed: unknown;
  try {
    parsed = parseJsonAnswer(answer, 'batch_synthesizer');
  } catch (error) {
    for (const concept of concepts) problems.set(concept.slug, (error as Error).message);
    return { drafts, problems };
  }
  if (!Value.Check(LlmPagesAnswer, parsed)) {
    const first = [...Value.Errors(LlmPagesAnswer, parsed)][0];
    for (const concept of concepts)
      problems.set(
        concept.slug,
        `the answer does not match the page schema at ${first?.instancePath ?? '/'}: ${first?.message ?? ''}`,
      );
    return { drafts, problems };
  }
  const bySlug = new Map(parsed.pages.map((page) => [page.slug, page]));
  for (const concept of concepts) {
    const page = bySlug.get(concept.slug);
    if (!page) {
      problems.set(concept.slug, 'the answer has no page for this concept');
      continue;
    }
    const known = new Set(concept.passages.map((passage) => passage.citation));
    const paragraphs = [page.summary, ...page.sections.flatMap((section) => section.paragraphs)];
    const unknown = paragraphs
      .flatMap((paragraph) => paragraph.citations)
      .filter((citation) => !known.has(citation));
    if (unknown.length > 0) {
      problems.set(
        concept.slug,
        `the answer cites passages that were not given: ${[...new Set(unknown)].join(', ')}`,
      );
      continue;
    }
    drafts.set(concept.slug, {
      title: concept.name,
      summary: { text: oneLine(page.summary.text), citations: page.summary.citations },
      sections: page.sections
        .filter((section) => section.paragraphs.length > 0)
        .map((section) => ({
          heading: oneLine(section.heading),
          paragraphs: section.paragraphs.map((paragraph) => ({
            text: oneLine(paragraph.text),
            citations: [...new Set(paragraph.citations)],
          })),
        })),
      related: [...concept.related],
    });
  }
  return { drafts, problems };
}

/** Page lines are paragraphs: a model's line breaks inside one are folded. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
