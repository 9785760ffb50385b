import { Type } from 'typebox';
import { passageDefaults, selectPassages } from '../../consolidation/passages.js';
import { type LoadedSource, loadSource, SourceMissing } from '../../consolidation/sources.js';
import { defineAdapter } from '../adapter.js';
import { conceptFlowFields, conceptPayloadOf, PassageSchema } from './knowledge-flow.js';

export const conceptSourceLoader = defineAdapter({
  type: 'concept_source_loader',
  group: 'knowledge',
  summary: 'Load the passages behind a concept within a token budget, taking from its sources in turns.',
  description:
    "Input: a concept_fanout message. Reads the concept's sources from storage (markdown, text, or HTML converted " +
    'to markdown) and keeps the sections that name the concept or an alias as whole words, the sections with most ' +
    'mentions first (a source none of whose sections names it gives the sentences detection quoted from it, if it ' +
    'still contains them); sources are taken in turns (best source first, at most `max_passages_per_source` each) until ' +
    '`token_budget` is spent, so one long source cannot fill it. A source deleted since the map was made is skipped. ' +
    'Emits the input with `passages: [{citation, source_id, key, title, url, heading_path, text}]` (citations ' +
    'numbered from 1). A `removed` message passes through.',
  config: Type.Object(
    {
      token_budget: Type.Integer({ minimum: 100, maximum: 100_000, default: passageDefaults.tokenBudget }),
      max_passages_per_source: Type.Integer({
        minimum: 1,
        maximum: 20,
        default: passageDefaults.maxPerSource,
      }),
      max_passage_characters: Type.Integer({
        minimum: 200,
        maximum: 20_000,
        default: passageDefaults.maxCharacters,
      }),
      max_source_bytes: Type.Integer({ minimum: 1, default: 5_000_000 }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object(conceptFlowFields),
  output: Type.Object({ ...conceptFlowFields, passages: Type.Optional(Type.Array(PassageSchema)) }),
  create: (config, resources) => async (payload) => {
    const message = conceptPayloadOf(payload, 'concept_source_loader');
    const concept = message.concept;
    if (!concept) return [{ payload }];
    const sources: (LoadedSource & { evidence?: { heading_path: string[]; quote: string }[] | undefined })[] =
      [];
    for (const entry of concept.sources) {
      try {
        sources.push({
          ...(await loadSource(resources.storage, entry, config.max_source_bytes)),
          evidence: entry.evidence,
        });
      } catch (error) {
        if (!(error instanceof SourceMissing)) throw error;
      }
    }
    const passages = selectPassages([concept.name, ...concept.aliases], sources, {
      tokenBudget: config.token_budget,
      maxPerSource: config.max_passages_per_source,
      maxCharacters: config.max_passage_characters,
    });
    return [{ payload: { ...payload, passages } }];
  },
});
