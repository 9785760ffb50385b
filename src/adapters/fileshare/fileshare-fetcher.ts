import { createHash } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Type } from 'typebox';
import { readShareFile, resolveShareRoot } from '../../fileshare/local-share.js';
import { keySegment } from '../../storage/keys.js';
import { defineAdapter, MessageSkipped } from '../adapter.js';

const contentTypes: Record<string, string> = {
  '.pdf': 'application/pdf',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.markdown': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

export const fileshareFetcher = defineAdapter({
  type: 'fileshare_fetcher',
  group: 'fileshare',
  summary: 'Download each listed file into storage, keeping its name, for document_converter.',
  description:
    'Reads the file named by `{root, path}` (as fileshare_enumerator emits) through the same root checks, refuses ' +
    'paths leaving the share and files over `max_file_size_mb`, and stores the bytes at `<sha256 of the path>/<file name>` ' +
    'with the file URL, path and modification time in the sidecar. A file that disappeared since it was listed is ' +
    'skipped, not failed. Emits `{storage_key, url, name, path, content_length, content_type}`.',
  config: Type.Object(
    {
      max_file_size_mb: Type.Number({
        exclusiveMinimum: 0,
        maximum: 1024,
        default: 50,
        description: 'larger files fail',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({
    root: Type.String(),
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
  create: (config, resources) => {
    const maxBytes = Math.floor(config.max_file_size_mb * 1024 * 1024);
    return async (payload, context) => {
      const { root: requestedRoot, path: relativePath } = payload as { root?: unknown; path?: unknown };
      if (typeof requestedRoot !== 'string' || typeof relativePath !== 'string') {
        throw new Error('input needs `root` and `path` strings (the fileshare_enumerator payload)');
      }
      const root = await resolveShareRoot(requestedRoot, resources.settings.fileshare_roots);
      let body: Buffer;
      try {
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
