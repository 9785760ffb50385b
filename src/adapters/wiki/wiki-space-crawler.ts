import { Type } from 'typebox';
import { type AdapterOutput, defineAdapter, PermanentFailure } from '../adapter.js';
import { onFirstUse } from '../api-access.js';
import {
  attachmentPrefix,
  checkWikiSecret,
  spaceScope,
  wikiClient,
  wikiConnectionFields,
} from './wiki-connection.js';

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
    'comes from the config or the input payload `space`. Incremental (the default): a page whose version was ' +
    'fetched by a completed run of the same config is not emitted again, and pages no longer listed are removed ' +
    'from the knowledge index with their attachments once the listing is complete (not when `max_pages` cut it short).',
  config: Type.Object(
    {
      ...wikiConnectionFields,
      space: Type.Optional(
        Type.String({ minLength: 1, description: 'space key (or Cloud space id); the payload `space` wins' }),
      ),
      incremental: Type.Boolean({
        default: true,
        description:
          'emit only pages new or changed (by version) since the last completed run of this config, and remove pages gone from the space (with their attachments) from the knowledge index; false emits every page',
      }),
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
    const clientFor = onFirstUse(() =>
      wikiClient(config, resources.settings, maxBytes, 'wiki_space_crawler'),
    );
    return async (payload, context) => {
      const space = typeof payload.space === 'string' && payload.space ? payload.space : config.space;
      if (!space) throw new PermanentFailure('no space: set `space` in the step config or the input payload');
      const client = clientFor();
      const route = context.destination ? { destination: context.destination } : {};
      async function* outputs(): AsyncGenerator<AdapterOutput> {
        let count = 0;
        let spaceKey = space as string;
        let known: Map<string, Record<string, unknown>> | undefined;
        const listed = new Set<string>();
        for await (const page of client.listPages(space as string, context.signal)) {
          if (!known) {
            spaceKey = page.space_key || spaceKey;
            known = config.incremental
              ? await context.syncState.settled(spaceScope(config, spaceKey))
              : new Map();
          }
          listed.add(page.page_id);
          if (known.get(page.page_id)?.version !== page.version) yield { payload: { ...page }, ...route };
          if (++count >= config.max_pages) return;
        }
        if (config.incremental) await forgetDeleted(spaceKey, listed);
      }
      /** Pages this config fetched before that the space no longer lists. */
      async function forgetDeleted(spaceKey: string, listed: ReadonlySet<string>): Promise<void> {
        const scope = spaceScope(config, spaceKey);
        const gone = [...(await context.syncState.all(scope))].filter(([pageId]) => !listed.has(pageId));
        if (gone.length === 0) return;
        await resources.knowledge.removeDocuments(
          gone.map(([, value]) => String(value.web_url ?? '')).filter(Boolean),
          gone.map(([pageId]) => attachmentPrefix(config, pageId)),
        );
        await context.syncState.remove(
          scope,
          gone.map(([pageId]) => pageId),
        );
      }
      return outputs();
    };
  },
});
