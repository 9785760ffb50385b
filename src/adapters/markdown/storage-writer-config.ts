/**
 * StorageWriterConfig (spec 2.3): the writer settings every storage-writing adapter shares,
 * one TypeBox schema reused by markdown_storage_writer and later writers, so `path_template`
 * and friends mean the same thing everywhere.
 */
import { type Static, Type } from 'typebox';

export const StorageWriterConfig = Type.Object({
  path_template: Type.String({
    minLength: 1,
    maxLength: 500,
    default: '{document_hash}.md',
    description:
      'object path under `<execution_id>/<stage>/`; placeholders: {document_hash} (SHA-256 prefix of the source key), {slug} (from the title or URL), {message_id}',
  }),
  content_type: Type.String({ minLength: 1, default: 'text/markdown; charset=utf-8' }),
  include_front_matter: Type.Boolean({
    default: true,
    description: 'write the front matter as a YAML header',
  }),
  overwrite: Type.Boolean({
    default: true,
    description: 'false: keep an object already at the path (a retried message finds its own earlier write)',
  }),
});

export type StorageWriterSettings = Static<typeof StorageWriterConfig>;

/** The object path of `path_template` with its placeholders filled in and made key-safe. */
export function renderPath(
  template: string,
  values: { document_hash: string; slug: string; message_id: string },
): string {
  const filled = template.replace(/\{(document_hash|slug|message_id)\}/g, (_, name: keyof typeof values) =>
    values[name].replace(/[^\p{L}\p{N}._-]+/gu, '-'),
  );
  const segments = filled
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.' && segment !== '..');
  if (segments.length === 0) throw new Error(`path_template ${template} gives an empty path`);
  return segments.join('/');
}

export function slugOf(text: string): string {
  return (
    text
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^\p{L}\p{N}]+/gu, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'document'
  );
}
