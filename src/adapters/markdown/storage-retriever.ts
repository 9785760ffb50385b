import { Type } from 'typebox';
import { assertTextual } from '../../markdown/html-input-guards.js';
import { defineAdapter } from '../adapter.js';

/** Content types that are never text, whatever the bytes look like. */
const binaryTypes =
  /^(image|audio|video|font)\/|^application\/(pdf|zip|gzip|x-gzip|octet-stream|x-tar|msword|vnd\.)/i;

export const storageRetriever = defineAdapter({
  type: 'storage_retriever',
  group: 'markdown',
  summary: 'Read a stored HTML object by key and emit its text for html_to_markdown.',
  description:
    'Reads the object named by `storage_key` (web_content_storage, fileshare_fetcher) or `object_key` (replayed objects) ' +
    'and decodes it: UTF-8, or the charset of the content type in its sidecar. Objects larger than `max_object_mb`, ' +
    'with a binary content type or binary bytes fail with a message saying so. `source_url` is the payload `url`, else ' +
    'the `url` in the sidecar metadata, else empty. Emits `{html, source_key, source_url}`.',
  config: Type.Object(
    {
      max_object_mb: Type.Number({
        exclusiveMinimum: 0,
        maximum: 512,
        default: 20,
        description: 'larger objects fail',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({
    storage_key: Type.Optional(Type.String()),
    object_key: Type.Optional(Type.String({ description: 'replayed objects carry this instead' })),
    url: Type.Optional(Type.String()),
  }),
  output: Type.Object({
    html: Type.String(),
    source_key: Type.String({ description: 'the storage key read' }),
    source_url: Type.String({ description: 'page URL, empty when unknown' }),
  }),
  create: (config, resources) => {
    const maxBytes = Math.floor(config.max_object_mb * 1024 * 1024);
    return async (payload) => {
      const key = [payload.storage_key, payload.object_key].find(
        (value) => typeof value === 'string' && value !== '',
      );
      if (typeof key !== 'string')
        throw new Error('input needs `storage_key` (or `object_key` for replayed objects)');
      const info = await resources.storage.stat(key);
      if (!info) throw new Error(`object ${key} does not exist`);
      if (info.size > maxBytes) {
        throw new Error(
          `object ${key} is ${info.size} bytes, over max_object_mb (${config.max_object_mb} MB)`,
        );
      }
      const contentType = info.content_type ?? '';
      if (binaryTypes.test(contentType) && !/octet-stream/i.test(contentType)) {
        throw new Error(`object ${key} is ${contentType}, not HTML or text`);
      }
      const body = await resources.storage.get(key);
      const html = decode(body, contentType, key);
      assertTextual(html, `object ${key}`);
      const metadataUrl = info.metadata.url;
      const sourceUrl =
        typeof payload.url === 'string' && payload.url !== ''
          ? payload.url
          : typeof metadataUrl === 'string'
            ? metadataUrl
            : '';
      return [{ payload: { html, source_key: key, source_url: sourceUrl } }];
    };
  },
});

function decode(body: Buffer, contentType: string, key: string): string {
  const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    throw new Error(`object ${key} declares charset ${charset}, which this service cannot decode`);
  }
}
