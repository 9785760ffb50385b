import { Type } from 'typebox';
import {
  checkPage,
  hasErrors,
  type PageFinding,
  type PageFindingCode,
  pageCheckDefaults,
  pageFindingTitles,
} from '../../consolidation/page-checks.js';
import { defineAdapter } from '../adapter.js';
import { conceptPayloadOf, mapCache, pageFlowFields } from './knowledge-flow.js';

const codes = Object.keys(pageFindingTitles) as PageFindingCode[];

const FindingSchema = Type.Object({
  code: Type.String(),
  severity: Type.Union([Type.Literal('error'), Type.Literal('warning')]),
  message: Type.String(),
  line: Type.Optional(Type.Integer()),
});

export const structuralValidator = defineAdapter({
  type: 'structural_validator',
  group: 'knowledge',
  summary:
    'Check each concept page (citations, length, source diversity, links); pages with errors are not published.',
  description:
    'Findings with stable codes (docs/knowledge.md, "Page findings"): K101 a citation that resolves to no loaded ' +
    'passage, K102 a paragraph or list item that cites nothing (the "Related concepts" and "Sources" sections ' +
    'excepted), K103/K104 fewer than `min_words` or more than `max_words` prose words (citation markers, link ' +
    'targets and URLs not counted), K105 fewer than `min_sources` ' +
    'distinct sources cited, K106 one source holding more than `max_source_share` of the citations, K107 a link to ' +
    'a concept the map does not have, K108 no title, K109 no page at all (no passage named the concept). Codes in ' +
    '`warn_only` are warnings. A page without errors goes on with `findings` (its warnings). A page with errors is ' +
    'stored as `rejected/<slug>.md` beside `rejected/<slug>.findings.json` and is not published: the step sends ' +
    '`{knowledge_base, map_key, map_version, removed: {slug, name}, withdrawn: true, findings}` on instead, so a page ' +
    'published earlier from what no longer holds is taken down (scribe_diff_writer stores its removal diff, ' +
    'kbase_writer deletes it); with `rejected_destination` the rejected page also goes there with `rejected: true` and ' +
    'its `findings`. A `removed` message passes through.',
  config: Type.Object(
    {
      min_words: Type.Integer({ minimum: 0, default: pageCheckDefaults.minWords }),
      max_words: Type.Integer({ minimum: 1, default: pageCheckDefaults.maxWords }),
      min_sources: Type.Integer({ minimum: 1, default: pageCheckDefaults.minSources }),
      max_source_share: Type.Number({
        exclusiveMinimum: 0,
        maximum: 1,
        default: pageCheckDefaults.maxSourceShare,
      }),
      warn_only: Type.Array(Type.Union(codes.map((code) => Type.Literal(code))), {
        default: [],
        description: 'finding codes reported as warnings, which do not stop publication',
      }),
      rejected_destination: Type.Optional(
        Type.String({
          minLength: 1,
          description: 'route id that also receives each rejected page (with its findings)',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  input: Type.Object(pageFlowFields),
  output: Type.Object({
    ...pageFlowFields,
    findings: Type.Optional(Type.Array(FindingSchema)),
    rejected: Type.Optional(Type.Boolean()),
    withdrawn: Type.Optional(Type.Boolean()),
  }),
  create: (config, resources) => {
    const readMap = mapCache(resources.storage);
    return async (payload, context) => {
      const message = conceptPayloadOf(payload, 'structural_validator');
      if (!message.concept) return [{ payload }];
      const slug = message.concept.slug;
      let findings: PageFinding[];
      if (!message.page) {
        findings = [{ code: 'K109', severity: 'error', message: pageFindingTitles.K109 }];
      } else {
        const map = await readMap(message.map_key);
        findings = checkPage(
          message.page.markdown,
          message.passages ?? [],
          new Set(Object.keys(map.concepts)),
          {
            minWords: config.min_words,
            maxWords: config.max_words,
            minSources: config.min_sources,
            maxSourceShare: config.max_source_share,
            warnOnly: config.warn_only,
          },
        );
      }
      if (!hasErrors(findings)) return [{ payload: { ...payload, findings } }];
      if (message.page)
        await context.writeObject(`rejected/${slug}.md`, message.page.markdown, {
          contentType: 'text/markdown',
        });
      await context.writeObject(
        `rejected/${slug}.findings.json`,
        JSON.stringify({ slug, findings }, null, 2),
        {
          contentType: 'application/json',
        },
      );
      // The page published before (if any) rests on what no longer holds: it is withdrawn.
      const withdrawal = {
        payload: {
          knowledge_base: message.knowledge_base,
          map_key: message.map_key,
          map_version: message.map_version,
          ...(message.concepts_total ? { concepts_total: message.concepts_total } : {}),
          removed: { slug, name: message.concept.name },
          withdrawn: true,
          findings,
        },
      };
      return config.rejected_destination
        ? [
            withdrawal,
            { payload: { ...payload, findings, rejected: true }, destination: config.rejected_destination },
          ]
        : [withdrawal];
    };
  },
});
