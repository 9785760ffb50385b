import { Type } from 'typebox';
import { defineAdapter } from '../adapter.js';
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
    'to `overlap_tokens` of text; segments under `min_tokens` are merged into a neighbour. Reads `{markdown}` ' +
    '(html_to_markdown) or `{storage_key}` (markdown_storage_writer: the stored markdown without its YAML header). ' +
    'Emits `{segments: [{text, token_count, heading_path}]}`; metadata.document passes through.',
  config: SegmenterConfig,
  input: Type.Object({ markdown: Type.Optional(Type.String()), storage_key: Type.Optional(Type.String()) }),
  output: Type.Object({ segments: Type.Array(SegmentSchema) }),
  create: (config, resources) => {
    const segment = segmenterFor(config);
    return async (payload) => {
      let markdown: string;
      if (typeof payload.markdown === 'string') markdown = payload.markdown;
      else if (typeof payload.storage_key === 'string') {
        markdown = stripFrontMatter((await resources.storage.get(payload.storage_key)).toString('utf8'));
      } else
        throw new Error(
          'input needs `markdown` (html_to_markdown) or `storage_key` (markdown_storage_writer)',
        );
      return [{ payload: { segments: segment(markdown) } }];
    };
  },
});

/** Markdown without a leading `---` YAML header. */
export function stripFrontMatter(text: string): string {
  if (!text.startsWith('---\n')) return text;
  const end = text.indexOf('\n---\n', 4);
  return end < 0 ? text : text.slice(end + 5).replace(/^\n+/, '');
}
