import { Type } from 'typebox';
import { stringify } from 'yaml';
import { defineAdapter } from '../adapter.js';
import { documentOf, documentStem } from './document.js';
import { SegmenterConfig, segmenterFor } from './segmenter-config.js';
import { renderPath, StorageWriterConfig, slugOf } from './storage-writer-config.js';

export const markdownStorageWriter = defineAdapter({
  type: 'markdown_storage_writer',
  group: 'markdown',
  summary:
    'Persist the canonical markdown of a document (StorageWriterConfig), with its front matter as a YAML header.',
  description:
    'Writes the html_to_markdown (or document_converter) output at `path_template` under `<execution_id>/<stage>/`, ' +
    'front matter as a YAML header when `include_front_matter`. `segment_count` is the number of segments smart_segmenter ' +
    'makes of it with the `segmenter` settings (keep them equal to the segmenter step). Adds `storage_key` to ' +
    'metadata.document, so the knowledge index points at the stored markdown; smart_segmenter can read the object by key. ' +
    'Emits `{storage_key, segment_count}`.',
  config: Type.Object(
    {
      ...StorageWriterConfig.properties,
      segmenter: Type.Optional(SegmenterConfig),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({ markdown: Type.String(), front_matter: Type.Optional(Type.Object({})) }),
  output: Type.Object({ storage_key: Type.String(), segment_count: Type.Integer({ minimum: 0 }) }),
  create: (config, resources) => {
    const segment = segmenterFor(
      config.segmenter ?? { max_tokens: 400, overlap_tokens: 50, min_tokens: 50, tokenizer: 'approximate' },
    );
    return async (payload, context) => {
      if (typeof payload.markdown !== 'string') throw new Error('input needs a `markdown` string');
      const document = documentOf(context, 'markdown_storage_writer');
      const frontMatter = (payload.front_matter ?? {}) as Record<string, unknown>;
      const objectPath = renderPath(config.path_template, {
        document_hash: documentStem(document.source_key),
        slug: slugOf(document.title ?? document.url ?? document.source_key),
        message_id: context.messageId,
      });
      const body =
        config.include_front_matter && Object.keys(frontMatter).length > 0
          ? `---\n${stringify(frontMatter).trimEnd()}\n---\n\n${payload.markdown}`
          : payload.markdown;
      const key = `${context.executionId}/${context.stage}/${objectPath}`;
      const existing = config.overwrite ? undefined : await resources.storage.stat(key);
      const storageKey =
        existing?.key ??
        (
          await context.writeObject(objectPath, body, {
            contentType: config.content_type,
            metadata: { source_key: document.source_key, url: document.url, title: document.title },
          })
        ).key;
      return [
        {
          payload: { storage_key: storageKey, segment_count: segment(payload.markdown).length },
          metadata: { document: { ...document, storage_key: storageKey } },
        },
      ];
    };
  },
});
