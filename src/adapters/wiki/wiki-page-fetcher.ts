import { Type } from 'typebox';
import { keySegment } from '../../storage/keys.js';
import { WikiNotFound, type WikiPage } from '../../wiki/confluence.js';
import { type AdapterOutput, defineAdapter, MessageSkipped } from '../adapter.js';
import { onFirstUse } from '../api-access.js';
import {
  checkWikiSecret,
  spaceScope,
  wikiClient,
  wikiConnectionFields,
  wikiRootOf,
} from './wiki-connection.js';
import { wikiPageFields } from './wiki-space-crawler.js';

export const wikiPageFetcher = defineAdapter({
  type: 'wiki_page_fetcher',
  group: 'wiki',
  summary: 'Store a wiki page body with its sidecar; one descriptor for the page and one per attachment.',
  description:
    'Fetches the page in storage format (Cloud `GET /wiki/api/v2/pages/{id}?body-format=storage`, Data Center ' +
    '`/rest/api/content/{id}?expand=body.storage`) and stores it at `<page id>.html`: an XHTML document whose ' +
    '<title> is the page title and whose <article> holds the storage-format body unchanged, with the page URL, id, ' +
    'space, version and modification time in the sidecar (html_to_markdown turns the `ac:` macros into markdown). ' +
    'Emits `{kind: "page", storage_key, url, title, page_id, version}` to the step destination (storage_retriever), ' +
    'then, with `attachments` on, one `{kind: "attachment", attachment_id, filename, media_type, file_size, ' +
    'download_link, page_id, page_title, page_url}` per attachment to `attachment_destination` ' +
    '(wiki_attachment_fetcher). A page answering 404 (deleted since it was listed) is skipped, not failed. Pages over ' +
    '`max_page_mb` fail. With `jira_url` (Data Center) the stored page carries it (`data-jira-url`), so ' +
    'html_to_markdown links Jira issue keys there.',
  config: Type.Object(
    {
      ...wikiConnectionFields,
      attachments: Type.Boolean({ default: true, description: 'emit a descriptor per attachment' }),
      attachment_destination: Type.Optional(
        Type.String({
          description: 'route id receiving the attachment descriptors; default the step destination',
        }),
      ),
      max_page_mb: Type.Number({
        exclusiveMinimum: 0,
        maximum: 100,
        default: 10,
        description: 'larger page bodies fail',
      }),
      jira_url: Type.Optional(
        Type.String({
          pattern: '^https?://',
          description:
            "the Jira a Data Center wiki's issue macros point at (`https://jira.acme.com`): html_to_markdown links a key to <jira_url>/browse/<key>; Cloud needs none (the site's own)",
        }),
      ),
    },
    { additionalProperties: false },
  ),
  input: Type.Object(wikiPageFields, { additionalProperties: true }),
  output: Type.Object({
    kind: Type.Union([Type.Literal('page'), Type.Literal('attachment')]),
    storage_key: Type.Optional(Type.String()),
    url: Type.Optional(Type.String()),
    title: Type.Optional(Type.String()),
    page_id: Type.String(),
    attachment_id: Type.Optional(Type.String()),
    filename: Type.Optional(Type.String()),
    media_type: Type.Optional(Type.String()),
    file_size: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
    download_link: Type.Optional(Type.String()),
  }),
  fanOut: true,
  checkSettings: checkWikiSecret,
  create: (config, resources) => {
    const maxBytes = Math.floor(config.max_page_mb * 1024 * 1024);
    const clientFor = onFirstUse(() =>
      wikiClient(config, resources.settings, maxBytes + 1024 * 1024, 'wiki_page_fetcher'),
    );
    return async (payload, context) => {
      const pageId = payload.page_id;
      if (typeof pageId !== 'string' || pageId === '')
        throw new Error('input needs `page_id` (the wiki_space_crawler payload)');
      // The JSON around a body is small: the cap is the body's, plus room for the envelope.
      const client = clientFor();
      let page: WikiPage;
      try {
        page = await client.getPage(pageId, context.signal);
      } catch (error) {
        if (error instanceof WikiNotFound) throw new MessageSkipped(`page ${pageId}: ${error.message}`);
        throw error;
      }
      if (Buffer.byteLength(page.storage) > maxBytes)
        throw new Error(`page ${pageId} is over max_page_mb (${config.max_page_mb} MB)`);
      const listed = payload as Record<string, unknown>;
      const spaceKey = page.space_key || String(listed.space_key ?? '');
      const url = page.web_url || String(listed.web_url ?? '');
      const wikiRoot = wikiRootOf(config);
      const document = pageDocument(page, { spaceKey, wikiRoot, jiraUrl: config.jira_url });
      const info = await context.writeObject(`${keySegment(pageId)}.html`, document, {
        contentType: 'application/xhtml+xml; charset=utf-8',
        metadata: {
          url,
          page_id: pageId,
          space_key: spaceKey,
          title: page.title,
          version: page.version,
          modified_at: page.modified_at,
          fetched_at: resources.now().toISOString(),
        },
      });
      // Known from now on (once this run completes): the next run skips this version.
      await context.syncState.put(spaceScope(config, spaceKey), [
        { key: pageId, value: { version: page.version, web_url: url } },
      ]);
      const destination = context.destination ? { destination: context.destination } : {};
      const outputs: AdapterOutput[] = [
        {
          payload: {
            kind: 'page',
            storage_key: info.key,
            url,
            title: page.title,
            page_id: pageId,
            version: page.version,
          },
          ...destination,
        },
      ];
      if (config.attachments) {
        const attachmentRoute = config.attachment_destination
          ? { destination: config.attachment_destination }
          : destination;
        for await (const attachment of client.listAttachments(pageId, context.signal))
          outputs.push({
            payload: {
              kind: 'attachment',
              ...attachment,
              page_id: pageId,
              page_title: page.title,
              page_url: url,
            },
            ...attachmentRoute,
          });
      }
      return outputs;
    };
  },
});

const escapeText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeAttribute = (text: string) => escapeText(text).replace(/"/g, '&quot;');

/** The stored document: the storage-format body unchanged, with the page's title, URL and identity. */
function pageDocument(
  page: WikiPage,
  where: { spaceKey: string; wikiRoot: string; jiraUrl?: string | undefined },
): string {
  const jira = where.jiraUrl ? ` data-jira-url="${escapeAttribute(where.jiraUrl)}"` : '';
  return (
    `<html><head><meta charset="utf-8"/><title>${escapeText(page.title)}</title>` +
    (page.web_url ? `<link rel="canonical" href="${escapeAttribute(page.web_url)}"/>` : '') +
    `</head><body><article data-wiki-root="${escapeAttribute(where.wikiRoot)}" data-wiki-space="${escapeAttribute(where.spaceKey)}"${jira} ` +
    `data-wiki-page-id="${escapeAttribute(page.page_id)}"><h1>${escapeText(page.title)}</h1>\n${page.storage}\n</article></body></html>`
  );
}
