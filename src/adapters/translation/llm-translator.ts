import { Type } from 'typebox';
import type { ChatMessage } from '../../llm/llm.js';
import { askModel, checkLlmProfile, llmProviderFor, llmStepConfig, quote } from '../../llm/llm-step.js';
import { toSearchLanguage } from '../../search-index/language.js';
import { defineAdapter } from '../adapter.js';
import { chunk, nothingToTranslate, protect, restore, shapeMismatch } from './markdown-protection.js';

const TYPE = 'llm_translator';

export const llmTranslator = defineAdapter({
  type: TYPE,
  group: 'translation',
  summary: 'Translate markdown with a language model, keeping its structure, code and links.',
  description:
    'Reads `{markdown, front_matter}` (html_to_markdown, document_converter) and emits the same shape in ' +
    '`target_language` (an ISO 639-1 code such as `nb` or `en-GB`) with `front_matter.language` set to it. Fenced code ' +
    'blocks, inline code, link and image targets, reference definitions and bare URLs are replaced by placeholders ' +
    'the model must copy, so they come back untranslated. The text is cut at blank lines into chunks of at most ' +
    '`chunk_chars` characters (a single longer block stays whole); chunks with no words (a lone code block) are not ' +
    'sent. Each translated chunk must keep the heading count, code fences and every placeholder exactly once; ' +
    'otherwise the message fails saying what the model broke. A model failure fails the message too. ' +
    'metadata.document.language becomes the search language of the target (`simple` when the index has no stemmer ' +
    'for it) and metadata `translation` records `{target_language, model, chunks}`. Front-matter title and ' +
    'description are kept as they are. Needs an `openai` profile; an unknown or extractive profile fails at start.',
  config: Type.Object(
    {
      llm_profile: llmStepConfig.llm_profile,
      target_language: Type.String({
        pattern: '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$',
        description: 'ISO 639-1 code of the language to translate into (`nb`, `en`, `de`, `en-GB`)',
      }),
      chunk_chars: Type.Integer({
        minimum: 200,
        maximum: 100_000,
        default: 6000,
        description: 'largest chunk of markdown sent in one request, in characters',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({ markdown: Type.String(), front_matter: Type.Optional(Type.Object({})) }),
  output: Type.Object({ markdown: Type.String(), front_matter: Type.Object({}) }),
  checkSettings: checkLlmProfile,
  create: (config, resources) => {
    const provider = llmProviderFor(resources.settings, config.llm_profile, TYPE);
    const model = provider.modelFor({});
    const languageName = languageNameOf(config.target_language);
    const system = translationPrompt(languageName, config.target_language);

    return async (payload, context) => {
      const { markdown, front_matter: frontMatter } = payload;
      if (typeof markdown !== 'string') throw new Error(`${TYPE}: the payload has no markdown text`);
      if (frontMatter !== undefined && (frontMatter === null || typeof frontMatter !== 'object')) {
        throw new Error(`${TYPE}: front_matter must be an object`);
      }
      const held = protect(markdown);
      const chunks = chunk(held.text, config.chunk_chars);
      const translated: string[] = [];
      let sent = 0;
      for (const [index, original] of chunks.entries()) {
        if (nothingToTranslate(original)) {
          translated.push(original);
          continue;
        }
        // Surrounding whitespace is the chunk boundary: keep the original's, translate the rest.
        const [, lead = '', body = '', trail = ''] = /^(\s*)([\s\S]*?)(\s*)$/.exec(original) ?? [];
        const answer = await askModel(
          provider,
          [system, { role: 'user', content: body }],
          TYPE,
          context.signal,
        );
        sent++;
        const result = unwrapFence(answer.trim());
        const broken = shapeMismatch(body, result);
        if (broken) {
          throw new Error(
            `${TYPE}: the model broke the markdown structure of chunk ${index + 1} of ${chunks.length}: ${broken}; answer ${quote(answer)}`,
          );
        }
        translated.push(`${lead}${result}${trail}`);
      }
      const output = restore(translated.join(''), held);
      const broken = shapeMismatch(markdown, output);
      if (broken) throw new Error(`${TYPE}: the translated document lost its structure: ${broken}`);

      const document = context.metadata.document as Record<string, unknown> | undefined;
      const language = toSearchLanguage(config.target_language) ?? 'simple';
      return [
        {
          payload: {
            markdown: output,
            front_matter: {
              ...(frontMatter as Record<string, unknown> | undefined),
              language: config.target_language,
            },
          },
          metadata: {
            ...(document && typeof document === 'object' ? { document: { ...document, language } } : {}),
            translation: { target_language: config.target_language, model, chunks: sent },
          },
        },
      ];
    };
  },
});

/** `nb` -> `Norwegian Bokmål`; the code itself when the runtime knows no name for it. */
function languageNameOf(code: string): string {
  try {
    return new Intl.DisplayNames(['en'], { type: 'language' }).of(code) ?? code;
  } catch {
    return code;
  }
}

function translationPrompt(name: string, code: string): ChatMessage {
  return {
    role: 'system',
    content:
      `Translate the markdown the user sends into ${name} (${code}). Keep the markdown structure exactly: the same ` +
      'headings, lists, tables, emphasis, line breaks and blank lines. Tokens like ⟦3⟧ stand for code and links: copy ' +
      'each one unchanged, exactly once, where it belongs in the sentence. Answer with the translated markdown only: ' +
      'no comments, no code fence around it.',
  };
}

/** Models sometimes wrap the whole answer in a ```markdown fence despite being asked not to. */
function unwrapFence(answer: string): string {
  const fenced = /^```(?:markdown|md)?[ \t]*\n([\s\S]*?)\n```$/i.exec(answer);
  return fenced ? (fenced[1] as string) : answer;
}
