import { Type } from 'typebox';
import { type AdapterOutput, defineAdapter, PermanentFailure } from '../adapter.js';
import { checkWikiSecret, wikiClient, wikiConnectionFields } from './wiki-connection.js';

/** The page descriptor every wiki stage passes on. */
export const wikiPageFields = {
  page_id: Type.String(),
  space_id: Type.String(),
  space_key: Type.String(),
  title: Type.String(),
  version: Type.Integer({ minimum: 1 }),
  parent_id: Type.Union([Type.String(), Type.Null()]),
  web_url: Type.String({ description: 'the page in the wiki UI' }),
  modified_at: Type.Union([Type.String(), Type.Null()], { description: 'when the current version was made' }),
};

export const wikiSpaceCrawler = defineAdapter({
  type: 'wiki_space_crawler',
  group: 'wiki',
  summary: 'List the pages of a wiki space (one message per page) for wiki_page_fetcher.',
  description:
    'Confluence Cloud: resolves the space key with `GET /wiki/api/v2/spaces?keys=` and pages through ' +
    '`/spaces/{id}/pages` by cursor (the `Link` header, else `_links.next`). Confluence Data Center: ' +
    '`/rest/api/content?spaceKey=&type=page&start=&limit=&expand=version,ancestors,space`. Current pages only. ' +
    'Emits `{page_id, space_id, space_key, title, version, parent_id, web_url, modified_at}` per page (fan-out, ' +
    'to the step destination). 401/403 fail at once (credentials); 429 and 503 wait for Retry-After. The space ' +
    'comes from the config or the input payload `space`.',
  config: Type.Object(
    {
      ...wikiConnectionFields,
      space: Type.Optional(
        Type.String({ minLength: 1, description: 'space key (or Cloud space id); the payload `space` wins' }),
      ),
      max_pages: Type.Integer({
        minimum: 1,
        maximum: 1_000_000,
        default: 100_000,
        description: 'stop after this many pages',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({
    space: Type.Optional(Type.String({ description: 'space key (overrides the config)' })),
  }),
  output: Type.Object(wikiPageFields),
  fanOut: true,
  checkSettings: checkWikiSecret,
  create: (config, resources) => {
    const maxBytes = 32 * 1024 * 1024;
    return async (payload, context) => {
      const space = typeof payload.space === 'string' && payload.space ? payload.space : config.space;
      if (!space) throw new PermanentFailure('no space: set `space` in the step config or the input payload');
      const client = wikiClient(config, resources.settings, maxBytes, 'wiki_space_crawler');
      async function* outputs(): AsyncGenerator<AdapterOutput> {
        let count = 0;
        for await (const page of client.listPages(space as string, context.signal)) {
          yield {
            payload: { ...page },
            ...(context.destination ? { destination: context.destination } : {}),
          };
          if (++count >= config.max_pages) return;
        }
      }
      return outputs();
    };
  },
});
