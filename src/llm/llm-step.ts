/**
 * What the LLM-driven pipeline adapters (sensitivity_classifier, anti_bac_gate, llm_translator)
 * share: finding their `llm_profile` among the `llm_profiles` setting when the step is created,
 * asking the model for a strict JSON object, and quoting a model's raw answer in an error
 * without flooding lineage.
 */
import { Type } from 'typebox';
import type { SettingsProblem } from '../adapters/adapter.js';
import type { Settings } from '../settings.js';
import { type ChatMessage, createLlmProvider, type LlmProfile, type LlmProvider } from './llm.js';

/** Config fields every LLM step shares (one definition, so their docs and limits agree). */
export const llmStepConfig = {
  llm_profile: Type.String({
    minLength: 1,
    description: 'name of an openai profile of the llm_profiles setting',
  }),
  content_cutoff: Type.Integer({
    minimum: 100,
    maximum: 200_000,
    default: 8000,
    description: 'characters of the content sent to the model',
  }),
};

/**
 * The provider of profile `name`. Unknown name: an error listing the configured names.
 * These adapters need a real model: the offline `extractive` profile only quotes retrieved
 * passages, it cannot classify, judge or translate, so naming it is a creation error too
 * (rather than a silent pass that would let unclassified content through).
 */
export function llmProviderFor(settings: Readonly<Settings>, name: string, adapter: string): LlmProvider {
  const problem = llmProfileProblem(settings, name);
  if (problem) throw new Error(`${adapter}: ${problem}`);
  return createLlmProvider(settings.llm_profiles.find((candidate) => candidate.name === name) as LlmProfile);
}

/** The provider of an optional `llm_profile`: undefined when the step names none (it works offline). */
export function optionalLlmProvider(
  settings: Readonly<Settings>,
  name: string | undefined,
  adapter: string,
): LlmProvider | undefined {
  return name === undefined ? undefined : llmProviderFor(settings, name, adapter);
}

/** Why profile `name` cannot answer an LLM step, or undefined when it can. */
export function llmProfileProblem(settings: Readonly<Settings>, name: string): string | undefined {
  const profile = settings.llm_profiles.find((candidate) => candidate.name === name);
  if (!profile) {
    const names = settings.llm_profiles.map((candidate) => candidate.name);
    return `llm profile ${JSON.stringify(name)} is not configured; llm_profiles has ${names.join(', ') || 'no profiles'}`;
  }
  if (profile.provider !== 'openai')
    return `llm profile ${JSON.stringify(name)} is ${profile.provider}, which cannot answer this step; name an openai profile (an OpenAI-compatible model) in llm_profile`;
  return undefined;
}

/** The validation check of an LLM step's `llm_profile` (finding E213). */
export function checkLlmProfile(
  config: { llm_profile?: string | undefined },
  settings: Readonly<Settings>,
): SettingsProblem[] {
  // A step whose model is optional (it works offline without one) names none: nothing to check.
  if (config.llm_profile === undefined) return [];
  const problem = llmProfileProblem(settings, config.llm_profile);
  return problem
    ? [
        {
          code: 'E213',
          field: ['llm_profile'],
          message: problem,
          remediation: 'Name an openai profile of the llm_profiles setting (WEIR_LLM_PROFILES), or add one.',
        },
      ]
    : [];
}

/** Asks the model and returns its raw answer; failures carry the adapter's name. */
export async function askModel(
  provider: LlmProvider,
  messages: ChatMessage[],
  adapter: string,
  signal: AbortSignal,
): Promise<string> {
  try {
    const { text } = await provider.complete({ messages, query: '', passages: [], temperature: 0, signal });
    return text;
  } catch (error) {
    throw new Error(`${adapter}: ${(error as Error).message}`);
  }
}

/**
 * The JSON object of a model answer. Models like to wrap JSON in a ```json fence; that one
 * wrapping is accepted, anything else (prose around it, an array, invalid JSON) is refused
 * with the raw answer quoted.
 */
export function parseJsonAnswer(answer: string, adapter: string): Record<string, unknown> {
  const trimmed = answer.trim();
  const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/i.exec(trimmed);
  let value: unknown;
  try {
    value = JSON.parse(fenced ? (fenced[1] as string) : trimmed);
  } catch {
    throw new Error(`${adapter}: the model did not answer with JSON: ${quote(answer)}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(`${adapter}: the model did not answer with a JSON object: ${quote(answer)}`);
  }
  return value as Record<string, unknown>;
}

/** `text` quoted for an error message, whitespace folded, cut at `limit` characters. */
export function quote(text: string, limit = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(flat.length > limit ? `${flat.slice(0, limit)}...` : flat);
}

/** The string at a dotted path (`a.b.c`) of a value, or undefined. */
export function stringAt(value: unknown, path: string): string | undefined {
  let current: unknown = value;
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return typeof current === 'string' ? current : undefined;
}
