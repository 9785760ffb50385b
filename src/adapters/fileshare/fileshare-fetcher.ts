import { createHash } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Type } from 'typebox';
import { readShareFile, resolveFileRoot } from '../../fileshare/local-share.js';
import { GraphNotFound, type SharePointClient } from '../../fileshare/sharepoint.js';
import { keySegment } from '../../storage/keys.js';
import { type AdapterContext, defineAdapter, MessageSkipped, PermanentFailure } from '../adapter.js';
import { onFirstUse } from '../api-access.js';
import {
  checkSharePointSecret,
  type SharePointConnection,
  sharepointClient,
  sharepointConnection,
} from './sharepoint-connection.js';

const contentTypes: Record<string, string> = {
  '.pdf': 'application/pdf',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.markdown': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

export const fileshareFetcher = defineAdapter({
  type: 'fileshare_fetcher',
  group: 'fileshare',
  summary: 'Download each listed file into storage, keeping its name, for document_converter.',
  description:
    'Reads the file named by `{root, path}` (as fileshare_enumerator emits) through the same root checks, refuses ' +
    'paths leaving the share and files over `max_file_size_mb`, and stores the bytes at `<sha256 of the path>/<file name>` ' +
    'with the file URL, path and modification time in the sidecar. A file that disappeared since it was listed is ' +
    'skipped, not failed. Emits `{storage_key, url, name, path, content_length, content_type}`. A `sharepoint` file ' +
    '(`{drive_id, item_id}`, with the `sharepoint` settings) is downloaded through Graph ' +
    '(`/drives/{drive}/items/{item}/content`, its 302 followed without credentials), conditionally on ' +
    '`previous_etag` (304: skipped as unchanged); `url` is its web URL.',
  config: Type.Object(
    {
      max_file_size_mb: Type.Number({
        exclusiveMinimum: 0,
        maximum: 1024,
        default: 50,
        description: 'larger files fail',
      }),
      sharepoint: Type.Optional(sharepointConnection),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({
    provider: Type.Optional(Type.String()),
    root: Type.Optional(Type.String()),
    drive_id: Type.Optional(Type.String()),
    item_id: Type.Optional(Type.String()),
    path: Type.String(),
    name: Type.Optional(Type.String()),
    modified_at: Type.Optional(Type.String()),
  }),
  output: Type.Object({
    storage_key: Type.String(),
    url: Type.String({ description: 'file:// URL of the source file' }),
    name: Type.String(),
    path: Type.String(),
    content_length: Type.Integer({ minimum: 0 }),
    content_type: Type.String(),
  }),
  checkSettings: (config, settings) => checkSharePointSecret(config.sharepoint, settings),
  create: (config, resources) => {
    const maxBytes = Math.floor(config.max_file_size_mb * 1024 * 1024);
    const sharepoint = config.sharepoint;
    const graph = onFirstUse((connection: SharePointConnection) =>
      sharepointClient(connection, resources.settings, maxBytes, 'fileshare_fetcher'),
    );
    // Share roots found inside an allowed root, resolved once for this step (local-share.ts).
    const allowedShareRoots = new Map<string, string>();
    return async (payload, context) => {
      if (payload.provider === 'sharepoint') {
        if (!sharepoint)
          throw new PermanentFailure('a sharepoint file needs the `sharepoint` settings in this step');
        return [{ payload: await fetchSharePointFile(graph(sharepoint), payload, context) }];
      }
      const { root: requestedRoot, path: relativePath } = payload as { root?: unknown; path?: unknown };
      if (typeof requestedRoot !== 'string' || typeof relativePath !== 'string') {
        throw new Error('input needs `root` and `path` strings (the fileshare_enumerator payload)');
      }
      let root: string;
      let body: Buffer;
      try {
        root = await resolveFileRoot(
          requestedRoot,
          relativePath,
          resources.settings.fileshare_roots,
          allowedShareRoots,
        );
        body = await readShareFile(root, relativePath, maxBytes);
      } catch (error) {
        if (error instanceof Error && /does not exist/.test(error.message))
          throw new MessageSkipped(error.message);
        throw error;
      }
      const name = path.posix.basename(relativePath);
      const extension = path.extname(name).toLowerCase();
      const contentType = contentTypes[extension] ?? 'application/octet-stream';
      const url = pathToFileURL(path.join(root, relativePath)).href;
      const folder = createHash('sha256').update(relativePath).digest('hex').slice(0, 16);
      const info = await context.writeObject(`${folder}/${keySegment(name)}`, body, {
        contentType,
        metadata: { url, path: relativePath, modified_at: payload.modified_at ?? null },
      });
      return [
        {
          payload: {
            storage_key: info.key,
            url,
            name,
            path: relativePath,
            content_length: body.length,
            content_type: contentType,
          },
        },
      ];
    };
  },
});

/** Downloads one drive item into storage (Graph, conditional on the last run's eTag). */
async function fetchSharePointFile(
  client: SharePointClient,
  payload: Record<string, unknown>,
  context: AdapterContext,
) {
  const { drive_id: driveId, item_id: itemId, name, path: filePath } = payload;
  if (typeof driveId !== 'string' || typeof itemId !== 'string' || typeof name !== 'string')
    throw new Error(
      'a sharepoint file needs `drive_id`, `item_id` and `name` (the fileshare_enumerator payload)',
    );
  const previous = typeof payload.previous_etag === 'string' ? payload.previous_etag : undefined;
  let download: Awaited<ReturnType<typeof client.download>>;
  try {
    download = await client.download(driveId, itemId, previous, context.signal);
  } catch (error) {
    if (error instanceof GraphNotFound) throw new MessageSkipped(`${name}: ${error.message}`);
    throw error;
  }
  if (!download.modified) throw new MessageSkipped(`${name} is unchanged since the last run (304)`);
  const body = download.response.body;
  const extension = path.extname(name).toLowerCase();
  const listedType = typeof payload.mime_type === 'string' ? payload.mime_type : '';
  const contentType = contentTypes[extension] ?? (listedType || 'application/octet-stream');
  const url = typeof payload.web_url === 'string' ? payload.web_url : '';
  const folder = createHash('sha256').update(`${driveId}/${itemId}`).digest('hex').slice(0, 16);
  const info = await context.writeObject(`${folder}/${keySegment(name)}`, body, {
    contentType,
    metadata: { url, path: filePath ?? name, drive_id: driveId, item_id: itemId, etag: payload.etag ?? null },
  });
  return {
    storage_key: info.key,
    url,
    name,
    path: typeof filePath === 'string' ? filePath : name,
    content_length: body.length,
    content_type: contentType,
  };
}
