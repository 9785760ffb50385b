/**
 * The offline default "model": no language model at all. It picks the sentences of the
 * retrieved passages that share the most words with the question, keeps them in passage
 * order, cites each with its [n], and says plainly that the answer is extractive. Good enough
 * to make chat useful (and testable) on a fresh install; configure an `openai` profile for
 * generated answers.
 */
import type { GenerationRequest, LlmProfile, LlmProvider } from './provider.js';

const MAX_SENTENCES = 3;
const PREFIX = 'Extractive answer (no language model configured; quoting the best-matching passages):';

export function createExtractiveProvider(profile: LlmProfile): LlmProvider {
  return {
    profile: profile.name,
    provider: 'extractive',
    modelFor: () => profile.name,
    async complete(request) {
      return { text: extractiveAnswer(request), usage: null };
    },
    async *stream(request) {
      // Chunks as a model would send them: the answer sentence by sentence.
      const [first, ...rest] = extractiveAnswer(request).split('\n');
      yield first ?? '';
      for (const line of rest) yield `\n${line}`;
    },
  };
}

export function extractiveAnswer(request: Pick<GenerationRequest, 'query' | 'passages'>): string {
  if (request.passages.length === 0) {
    return 'Extractive answer: no indexed passage matches the question, so there is nothing to quote.';
  }
  const queryTerms = new Set(terms(request.query));
  const candidates = request.passages.flatMap((passage, passageOrder) => {
    const sentences = splitSentences(passage.text);
    return sentences.map((sentence, sentenceOrder) => ({
      sentence,
      citation: passage.citation,
      order: passageOrder * 1000 + sentenceOrder,
      // Overlap with the question, with a small bonus for higher-ranked passages; the end of a
      // passage cut in the middle of a sentence (segments overlap) counts half.
      score:
        (overlap(terms(sentence), queryTerms) + 0.1 / (passageOrder + 1)) *
        (sentenceOrder === sentences.length - 1 && isCut(sentence) ? 0.5 : 1),
    }));
  });
  // Overlapping segments repeat sentences: a sentence already quoted, or one holding or held
  // by a quoted one (a truncated copy), is not quoted again.
  const chosen: typeof candidates = [];
  for (const candidate of candidates.sort((a, b) => b.score - a.score || a.order - b.order)) {
    const text = normalized(candidate.sentence);
    if (
      chosen.some(
        (item) => normalized(item.sentence).includes(text) || text.includes(normalized(item.sentence)),
      )
    )
      continue;
    chosen.push(candidate);
    if (chosen.length === MAX_SENTENCES) break;
  }
  chosen.sort((a, b) => a.order - b.order);
  return [PREFIX, ...chosen.map((item) => `${item.sentence} [${item.citation}]`)].join('\n');
}

function normalized(sentence: string): string {
  return sentence
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** A passage's last words that end with a plain word or comma: the segment was cut mid-sentence. */
function isCut(sentence: string): boolean {
  return /[\p{L}\p{N},]$/u.test(sentence) && sentence.split(' ').length > 3;
}

function splitSentences(text: string): string[] {
  return text
    .replace(/\s+/g, ' ')
    .split(/(?<=[.!?])\s+/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.length > 0);
}

/** Lower-cased words of 3+ letters, cut to 5 characters: a crude stem that works across languages. */
function terms(text: string): string[] {
  return (text.toLowerCase().match(/\p{L}{3,}/gu) ?? []).map((word) => word.slice(0, 5));
}

function overlap(words: readonly string[], queryTerms: ReadonlySet<string>): number {
  const seen = new Set<string>();
  for (const word of words) if (queryTerms.has(word)) seen.add(word);
  return seen.size;
}
