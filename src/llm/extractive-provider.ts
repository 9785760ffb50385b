/**
 * The offline default "model": no language model at all. It quotes the sentences, table rows
 * and code of the retrieved passages that best match the question, each cited with its [n],
 * and says plainly that the answer is extractive (extractive-answer.ts). Good enough to make
 * chat useful (and testable) on a fresh install; configure an `openai` profile for generated
 * answers.
 */
import { extractiveAnswer } from './extractive-answer.js';
import { GenerationError, type GenerationRequest, type LlmProfile, type LlmProvider } from './provider.js';

export function createExtractiveProvider(profile: LlmProfile): LlmProvider {
  return {
    profile: profile.name,
    provider: 'extractive',
    modelFor: () => profile.name,
    async complete(request) {
      return { text: await answer(request), usage: null };
    },
    async *stream(request) {
      // Chunks as a model would send them: the answer line by line.
      const [first, ...rest] = (await answer(request)).split('\n');
      yield first ?? '';
      for (const line of rest) yield `\n${line}`;
    },
  };
}

function answer(request: GenerationRequest): Promise<string> {
  // Sentences are ranked with the index's own analysis, which chat passes along.
  if (!request.analyze)
    throw new GenerationError('the extractive answer needs the knowledge index to rank sentences');
  return extractiveAnswer(request, request.analyze);
}
