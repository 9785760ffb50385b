import { Type } from 'typebox';
import { parse } from 'yaml';
import { toSearchLanguage } from '../../search-index/language.js';
import { defineAdapter } from '../adapter.js';
import type { DocumentMetadata } from './document.js';
import { SegmenterConfig, segmenterFor } from './segmenter-config.js';

export const SegmentSchema = Type.Object({
  text: Type.String(),
  token_count: Type.Integer({ minimum: 0 }),
  heading_path: Type.Array(Type.String(), { description: 'headings above the segment, outermost first' }),
});

export const smartSegmenter = defineAdapter({
  type: 'smart_segmenter',
  group: 'markdown',
  summary: 'Split markdown into token-bounded segments at headings, paragraphs and sentences.',
  description:
    'Headings are hard boundaries and give `heading_path`; a section is packed into segments of at most `max_tokens`, ' +
    'split at paragraphs, then sentences, then words; fenced code blocks and tables stay whole when they fit and are ' +
    'otherwise split at line boundaries (re-fenced, table header repeated). Consecutive segments of a section share up ' +
    'to `overlap_tokens` of text; segments under `min_tokens` join the next segment of their own section or subsection (taking its deeper heading path) or the previous one of the same section, never a sibling section. Reads `{markdown}` ' +
    '(html_to_markdown) or `{storage_key}` (markdown_storage_writer: the stored markdown without its YAML header). ' +
    'Emits `{segments: [{text, token_count, heading_path}]}`; metadata.document passes through. A replayed object ' +
    '(`{object_key}`, spec 4.7) of markdown_storage_writer gets metadata.document back from what was stored with it.',
  config: SegmenterConfig,
  input: Type.Object({
    markdown: Type.Optional(Type.String()),
    storage_key: Type.Optional(Type.String()),
    object_key: Type.Optional(Type.String({ description: 'a replayed stored markdown object (spec 4.7)' })),
  }),
  output: Type.Object({ segments: Type.Array(SegmentSchema) }),
  create: (config, resources) => {
    const segment = segmenterFor(config);
    return async (payload, context) => {
      if (typeof payload.markdown === 'string') return [{ payload: { segments: segment(payload.markdown) } }];
      const key = [payload.storage_key, payload.object_key].find((value) => typeof value === 'string');
      if (key === undefined)
        throw new Error(
          'input needs `markdown` (html_to_markdown), `storage_key` (markdown_storage_writer) or `object_key` (a replay)',
        );
      const { header, body } = splitFrontMatter((await resources.storage.get(key)).toString('utf8'));
      const segments = segment(body);
      if (context.metadata.document) return [{ payload: { segments } }];
      // A replayed object comes without metadata.document: markdown_storage_writer stored the
      // document's identity with the object and its language in the front matter.
      return [{ payload: { segments }, metadata: { document: await storedDocument(key, header) } }];
    };

    async function storedDocument(key: string, header: string): Promise<DocumentMetadata> {
      const info = await resources.storage.stat(key);
      const stored = info?.metadata ?? {};
      const sourceKey = typeof stored.source_key === 'string' ? stored.source_key : '';
      if (!sourceKey) {
        throw new Error(
          `${key} has no stored document identity (source_key): replay objects markdown_storage_writer wrote`,
        );
      }
      const front = parseHeader(header);
      return {
        source_key: sourceKey,
        url: typeof stored.url === 'string' ? stored.url : null,
        title: typeof stored.title === 'string' ? stored.title : null,
        language:
          toSearchLanguage(typeof front.language === 'string' ? front.language : undefined) ?? 'simple',
        storage_key: key,
      };
    }
  },
});

/** A leading `---` YAML header and the markdown after it (`header` empty when there is none). */
function splitFrontMatter(text: string): { header: string; body: string } {
  const end = text.startsWith('---\n') ? text.indexOf('\n---\n', 4) : -1;
  if (end < 0) return { header: '', body: text };
  return { header: text.slice(4, end), body: text.slice(end + 5).replace(/^\n+/, '') };
}

/** A YAML header as an object ({} when empty or when it does not parse to a mapping). */
function parseHeader(header: string): Record<string, unknown> {
  if (header === '') return {};
  try {
    const parsed: unknown = parse(header);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
