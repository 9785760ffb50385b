import { Type } from 'typebox';
import { contentHashOf, keepExistingLinks } from '../../consolidation/concept-page.js';
import { defineAdapter, PermanentFailure } from '../adapter.js';
import { type ConceptPayload, conceptPayloadOf, mapCache, pageFlowFields } from './knowledge-flow.js';

const TYPE = 'concept_link_resolver';

/** Which concepts have a page, as the last completed runs left them (per knowledge base). */
const pagesScope = (knowledgeBase: string) => `concept-pages ${knowledgeBase}`;

export const conceptLinkResolver = defineAdapter({
  type: TYPE,
  group: 'knowledge',
  summary: "Fan-in per map version: once every concept's page is checked, link only to pages that exist.",
  description:
    'Input: structural_validator messages (a checked page, or a `removed`/`withdrawn` concept), each carrying the ' +
    "`concepts_total` concept_fanout stamped. Each is recorded as an arrival of its map version in the execution's " +
    'fan-in (once per slug, however often redelivered); the arrival that completes the version emits every message ' +
    'of it, pages with their "Related concepts" links kept only to concepts that have a page: one written in this ' +
    'run, or, for a concept this run did not write, one a completed earlier run wrote (kept in the sync state). A ' +
    'link to a concept with no page (no passage named it, or the validator rejected it) is dropped, and the section ' +
    "when none is left; `concept.related` and the page's `content_hash` follow. Every other arrival emits nothing. " +
    'Messages of a version that fail for good keep it from completing: its pages are then not published, and the ' +
    'failures show in lineage.',
  config: Type.Object({}, { additionalProperties: false }),
  input: Type.Object(
    { ...pageFlowFields, concepts_total: Type.Integer({ minimum: 1 }) },
    {
      additionalProperties: true,
    },
  ),
  output: Type.Object(pageFlowFields, { additionalProperties: true }),
  fanOut: true,
  create: (_config, resources) => {
    const readMap = mapCache(resources.storage);
    return async (payload, context) => {
      const message = conceptPayloadOf(payload, TYPE);
      const total = payload.concepts_total;
      if (typeof total !== 'number' || !Number.isInteger(total) || total < 1)
        throw new PermanentFailure(`${TYPE}: the input needs \`concepts_total\` (from concept_fanout)`);
      const slug = message.concept?.slug ?? (message.removed?.slug as string);
      const arrivals = await context.fanIn.arrive(`concept_pages:${message.map_key}`, slug, payload, total);
      if (!arrivals) return [];
      const messages = arrivals.map((arrival) => arrival.value as unknown as ConceptPayload);
      const written = new Set(
        messages.filter((item) => item.concept && item.page).map((item) => item.concept?.slug as string),
      );
      const arrived = new Set(arrivals.map((arrival) => arrival.item));
      const map = await readMap(message.map_key);
      const scope = pagesScope(message.knowledge_base);
      const earlier = await context.syncState.settled(scope);
      const hasPage = (other: string) =>
        written.has(other) ||
        (!arrived.has(other) && map.concepts[other] !== undefined && earlier.get(other)?.page === true);
      await context.syncState.put(
        scope,
        [...arrived].map((item) => ({ key: item, value: { page: written.has(item) } })),
      );
      return messages.map((item) => {
        if (!item.concept || !item.page) return { payload: item as unknown as Record<string, unknown> };
        const markdown = keepExistingLinks(item.page.markdown, hasPage);
        return {
          payload: {
            ...item,
            concept: { ...item.concept, related: item.concept.related.filter((link) => hasPage(link.slug)) },
            page: { ...item.page, markdown, content_hash: contentHashOf(markdown) },
          } as unknown as Record<string, unknown>,
        };
      });
    };
  },
});
