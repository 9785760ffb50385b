/**
 * The RAG prompt: a system message with the persona, the template's system prompt, the rules
 * for citing, and the retrieved passages numbered [1], [2], ...; then the history; then the
 * question. The numbers are the `citation` of each source in the response, so an answer's
 * "[2]" maps back to a source attribution.
 */
import type { ChatMessage, Passage } from '../llm/llm.js';

export const CITATION_RULES =
  'Answer from the numbered sources below. Cite every statement with the number of its source in square brackets, like [1] or [2][3]. If the sources do not answer the question, say so instead of guessing.';

export function buildPrompt(input: {
  persona?: string | null | undefined;
  systemPrompt?: string | null | undefined;
  passages: readonly Passage[];
  history: readonly { role: 'user' | 'assistant'; content: string }[];
  query: string;
  /** `none`: no retrieval, so no sources and no citation rules. */
  contextMode: 'segments' | 'none';
}): ChatMessage[] {
  const system: string[] = [];
  if (input.persona) system.push(input.persona.trim());
  if (input.systemPrompt) system.push(input.systemPrompt.trim());
  if (input.contextMode === 'segments') {
    system.push(CITATION_RULES);
    system.push(
      input.passages.length === 0
        ? 'Sources: none were found for this question.'
        : `Sources:\n\n${input.passages.map(formatPassage).join('\n\n')}`,
    );
  }
  const messages: ChatMessage[] = [];
  if (system.length > 0) messages.push({ role: 'system', content: system.join('\n\n') });
  for (const turn of input.history) messages.push({ role: turn.role, content: turn.content });
  messages.push({ role: 'user', content: input.query });
  return messages;
}

function formatPassage(passage: Passage): string {
  const label = [passage.title, passage.headingPath.join(' > ') || null, passage.location]
    .filter((part): part is string => Boolean(part))
    .join(' | ');
  return `[${passage.citation}] ${label}\n${passage.text}`;
}

/** The source numbers an answer cites: [1], [2][3] and [1, 4] forms. */
export function citedNumbers(answer: string): Set<number> {
  const cited = new Set<number>();
  for (const match of answer.matchAll(/\[(\d+(?:\s*,\s*\d+)*)\]/g)) {
    for (const number of (match[1] ?? '').split(',')) cited.add(Number(number.trim()));
  }
  return cited;
}
