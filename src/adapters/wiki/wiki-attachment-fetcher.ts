import { createHash } from 'node:crypto';
import { Type } from 'typebox';
import { keySegment } from '../../storage/keys.js';
import { WikiNotFound } from '../../wiki/confluence.js';
import { defineAdapter, MessageSkipped } from '../adapter.js';
import { onFirstUse } from '../api-access.js';
import { checkWikiSecret, wikiClient, wikiConnectionFields } from './wiki-connection.js';

export const wikiAttachmentFetcher = defineAdapter({
  type: 'wiki_attachment_fetcher',
  group: 'wiki',
  summary: 'Download a wiki attachment into storage, keeping its file name, for document_converter.',
  description:
    'Downloads `download_link` (a wiki_page_fetcher attachment descriptor) with the wiki credentials, following the ' +
    "redirect to the file host without them (credentials go to the wiki's own origin only). Stores the bytes at " +
    '`<page id>/<attachment id>/<file name>` (the name made key-safe; the exact name, non-ASCII included, is in the ' +
    'sidecar and the payload) and emits what fileshare_fetcher emits, `{storage_key, url, name, path, content_length, ' +
    'content_type}`, plus `title` (`<page title> / <file name>`) so search results name the page it belongs to. ' +
    'Attachments answering 404 are skipped; bodies over `max_file_size_mb` fail, whatever size the wiki listed.',
  config: Type.Object(
    {
      ...wikiConnectionFields,
      max_file_size_mb: Type.Number({
        exclusiveMinimum: 0,
        maximum: 1024,
        default: 50,
        description: 'larger files fail',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object(
    {
      attachment_id: Type.String(),
      filename: Type.String(),
      download_link: Type.String(),
      media_type: Type.Optional(Type.String()),
      page_id: Type.Optional(Type.String()),
      page_title: Type.Optional(Type.String()),
      page_url: Type.Optional(Type.String()),
    },
    { additionalProperties: true },
  ),
  output: Type.Object({
    storage_key: Type.String(),
    url: Type.String({ description: 'the attachment download link' }),
    name: Type.String(),
    path: Type.String({ description: '`<page title>/<file name>`' }),
    content_length: Type.Integer({ minimum: 0 }),
    content_type: Type.String(),
    title: Type.String(),
  }),
  checkSettings: checkWikiSecret,
  create: (config, resources) => {
    const maxBytes = Math.floor(config.max_file_size_mb * 1024 * 1024);
    const clientFor = onFirstUse(() =>
      wikiClient(config, resources.settings, maxBytes, 'wiki_attachment_fetcher'),
    );
    return async (payload, context) => {
      const {
        attachment_id: attachmentId,
        filename,
        download_link: link,
      } = payload as Record<string, unknown>;
      if (typeof attachmentId !== 'string' || typeof filename !== 'string' || typeof link !== 'string')
        throw new Error(
          'input needs `attachment_id`, `filename` and `download_link` (a wiki_page_fetcher attachment)',
        );
      const client = clientFor();
      let body: Buffer;
      let servedType: string | undefined;
      try {
        const response = await client.download(link, context.signal);
        body = response.body;
        servedType = response.headers['content-type'];
      } catch (error) {
        if (error instanceof WikiNotFound)
          throw new MessageSkipped(`attachment ${filename}: ${error.message}`);
        throw error;
      }
      const pageId = typeof payload.page_id === 'string' ? payload.page_id : 'page';
      const pageTitle = typeof payload.page_title === 'string' ? payload.page_title : '';
      const listedType = typeof payload.media_type === 'string' ? payload.media_type : '';
      // The wiki's own media type first: download hosts often answer application/octet-stream.
      const contentType = listedType || servedType || 'application/octet-stream';
      const folder = `${keySegment(pageId)}/${keySegment(attachmentId)}`;
      const nameHash = createHash('sha256').update(filename).digest('hex').slice(0, 8);
      const info = await context.writeObject(`${folder}/${nameHash}-${keySegment(filename)}`, body, {
        contentType,
        metadata: {
          url: link,
          filename,
          page_id: pageId,
          page_title: pageTitle,
          page_url: typeof payload.page_url === 'string' ? payload.page_url : null,
        },
      });
      return [
        {
          payload: {
            storage_key: info.key,
            url: link,
            name: filename,
            path: `${pageTitle}/${filename}`,
            content_length: body.length,
            content_type: contentType,
            title: pageTitle ? `${pageTitle} / ${filename}` : filename,
          },
        },
      ];
    };
  },
});
