import { Type } from 'typebox';
import { turnTexts } from '../../conversations/compact.js';
import { defaultNorwegianOptions, loadNorwegianClassifier } from '../../conversations/norwegian.js';
import { defineAdapter } from '../adapter.js';
import { droppedMessage } from './conv-filter.js';
import { ConversationMessage } from './conv-stored-keys-fanout.js';

const TYPE = 'conv_norwegian_filter';

export const convNorwegianFilter = defineAdapter({
  type: TYPE,
  group: 'conversation',
  summary: 'Keep Norwegian conversations (Bokmål and Nynorsk); Danish, Swedish and the rest are dropped.',
  description:
    'Scores the text with ELD (character n-grams, the detector the knowledge index uses; no model download), limited ' +
    'to the languages search has stemmers for. Norwegian must lead the best other language by `margin` (Danish is ' +
    'the usual runner-up, and the hard case; within 0.03 of it, words spelt only one way, like "hva" / "hvad", decide); ' +
    'text with fewer than `min_letters` letters is `undetermined`, as is ' +
    'Norwegian that leads by less than the margin. `text: user` reads only what the asking side wrote (an English ' +
    'bot answering Norwegian users does not decide). Adds `language: {verdict, language?, margin}`; a dropped ' +
    'conversation passes on as `{..., dropped: true, reason: "language:<code>" | "language:undetermined"}` without its ' +
    'body, unless `keep_undetermined`. Measured on the fixture in docs/benchmarks.md.',
  config: Type.Object(
    {
      min_letters: Type.Integer({
        minimum: 1,
        default: defaultNorwegianOptions.minLetters,
        description: 'fewer letters: undetermined',
      }),
      margin: Type.Number({
        minimum: 0,
        maximum: 1,
        default: defaultNorwegianOptions.margin,
        description: 'score lead over the best other language needed to call it Norwegian',
      }),
      text: Type.Union([Type.Literal('all'), Type.Literal('user')], {
        default: 'all',
        description: 'which turns are read: all, or only the user turns',
      }),
      keep_undetermined: Type.Boolean({
        default: false,
        description: 'keep conversations too short to tell',
      }),
    },
    { additionalProperties: false },
  ),
  input: ConversationMessage,
  output: ConversationMessage,
  create: (config) => {
    const classifier = loadNorwegianClassifier({
      minLetters: config.min_letters,
      margin: config.margin,
      sampleCharacters: defaultNorwegianOptions.sampleCharacters,
    });
    return async (payload) => {
      if (payload.dropped === true) return [{ payload }];
      const conversation = payload.conversation as { text?: unknown } | undefined;
      if (typeof conversation?.text !== 'string')
        throw new Error(`${TYPE}: input needs \`conversation\` with its \`text\` (conv_stored_keys_fanout)`);
      const text = turnTexts(conversation.text, config.text);
      const result = (await classifier)(text);
      const language = {
        verdict: result.verdict,
        ...(result.language ? { language: result.language } : {}),
        margin: result.margin,
      };
      if (result.verdict === 'norwegian' || (result.verdict === 'undetermined' && config.keep_undetermined))
        return [{ payload: { ...payload, language } }];
      const reason =
        result.verdict === 'undetermined' ? 'language:undetermined' : `language:${result.language}`;
      return [droppedMessage(payload, reason, { language })];
    };
  },
});
