/**
 * The language-model port: what a provider is asked and answers. A provider is built from one
 * `llm_profiles` entry (llm.ts); chat asks it for a whole answer (complete) or for chunks as
 * they come (stream). Any failure (refused connection, HTTP error, timeout, malformed reply)
 * surfaces as a GenerationError with a message fit for the API, never a credential. The
 * providers implement this and look down at it; llm.ts, which picks one, looks down at them.
 */
import type { TextAnalyzer } from '../search/text-analysis.js';
import type { Settings } from '../settings.js';

export type LlmProfile = Settings['llm_profiles'][number];

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** A retrieved passage as the prompt numbers it: `[citation]`. */
export interface Passage {
  citation: number;
  text: string;
  title: string | null;
  location: string | null;
  headingPath: readonly string[];
}

export interface GenerationRequest {
  messages: readonly ChatMessage[];
  /** The user's question and the passages, for providers that work without a model. */
  query: string;
  passages: readonly Passage[];
  /** The index's text analysis, for providers that rank passages' sentences themselves. */
  analyze?: TextAnalyzer | undefined;
  model?: string | undefined;
  temperature?: number | undefined;
  maxTokens?: number | undefined;
  signal?: AbortSignal | undefined;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface LlmProvider {
  readonly profile: string;
  readonly provider: string;
  /** The model that answers (`model` of the request or profile; the profile name for extractive). */
  modelFor(request: Pick<GenerationRequest, 'model'>): string;
  complete(request: GenerationRequest): Promise<{ text: string; usage: Usage | null }>;
  stream(request: GenerationRequest): AsyncIterable<string>;
}

export class GenerationError extends Error {
  override name = 'GenerationError';
}
