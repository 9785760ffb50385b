/** Segmenter settings shared by smart_segmenter and markdown_storage_writer (its segment_count). */
import { type Static, Type } from 'typebox';
import { type Segment, segmentMarkdown } from '../../markdown/segmenter.js';
import { tokenCounter } from '../../markdown/tokens.js';

export const SegmenterConfig = Type.Object(
  {
    max_tokens: Type.Integer({ minimum: 16, maximum: 32_000, default: 400, description: 'largest segment' }),
    overlap_tokens: Type.Integer({
      minimum: 0,
      maximum: 4_000,
      default: 50,
      description: 'closing sentences of a segment repeated at the start of the next one of the same section',
    }),
    min_tokens: Type.Integer({
      minimum: 0,
      maximum: 4_000,
      default: 50,
      description:
        'smaller segments join the next one of their own section or subsection, or the previous one of the same section, when the result fits',
    }),
    tokenizer: Type.Union([Type.Literal('approximate'), Type.Literal('cl100k')], {
      default: 'approximate',
      description:
        'approximate: fast cl100k estimate (about 1% off in total); cl100k: the exact BPE (js-tiktoken, slower)',
    }),
  },
  { additionalProperties: false },
);

export type SegmenterSettings = Static<typeof SegmenterConfig>;

export function checkSegmenterSettings(settings: SegmenterSettings): void {
  if (settings.overlap_tokens >= settings.max_tokens) {
    throw new Error(
      `overlap_tokens (${settings.overlap_tokens}) must be below max_tokens (${settings.max_tokens})`,
    );
  }
  if (settings.min_tokens > settings.max_tokens) {
    throw new Error(
      `min_tokens (${settings.min_tokens}) must not exceed max_tokens (${settings.max_tokens})`,
    );
  }
}

export function segmenterFor(settings: SegmenterSettings): (markdown: string) => Segment[] {
  checkSegmenterSettings(settings);
  const countTokens = tokenCounter(settings.tokenizer);
  return (markdown) =>
    segmentMarkdown(markdown, {
      maxTokens: settings.max_tokens,
      overlapTokens: settings.overlap_tokens,
      minTokens: settings.min_tokens,
      countTokens,
    });
}
