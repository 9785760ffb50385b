/**
 * Builds the provider of one `llm_profiles` entry. The port (types, GenerationError) is in
 * provider.ts, re-exported here for the callers that pick a provider.
 */
import { createExtractiveProvider } from './extractive-provider.js';
import { createOpenAiProvider } from './openai-provider.js';
import type { LlmProfile, LlmProvider } from './provider.js';

export type { ChatMessage, GenerationRequest, LlmProfile, LlmProvider, Passage, Usage } from './provider.js';
export { GenerationError } from './provider.js';

export function createLlmProvider(profile: LlmProfile): LlmProvider {
  switch (profile.provider) {
    case 'extractive':
      return createExtractiveProvider(profile);
    case 'openai':
      return createOpenAiProvider(profile);
  }
}
