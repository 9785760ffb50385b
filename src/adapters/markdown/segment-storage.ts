import { Type } from 'typebox';
import { defineAdapter } from '../adapter.js';
import { documentInput, documentOf, documentStem } from './document.js';
import { SegmentSchema } from './smart-segmenter.js';

export const segmentStorage = defineAdapter({
  type: 'segment_storage',
  group: 'markdown',
  summary: 'Persist the segments of a document as JSON and index them for keyword search.',
  description:
    'Writes `{document, segments}` as `<document hash>.segments.json` and upserts the document (metadata.document) and ' +
    'its segments into the knowledge index; segments past the new count are removed, so a page that got shorter ' +
    'loses its old tail. Emits `{storage_key, segment_count}`.',
  config: Type.Object({}, { additionalProperties: false }),
  input: Type.Object({ segments: Type.Array(SegmentSchema) }),
  output: Type.Object({ storage_key: Type.String(), segment_count: Type.Integer({ minimum: 0 }) }),
  create: (_config, resources) => async (payload, context) => {
    const segments = readSegments(payload.segments);
    const document = documentOf(context, 'segment_storage');
    const body = JSON.stringify({ document, segments });
    const info = await context.writeObject(`${documentStem(document.source_key)}.segments.json`, body, {
      contentType: 'application/json',
      metadata: { source_key: document.source_key, url: document.url, segment_count: segments.length },
    });
    const documentId = await resources.knowledge.upsertDocument(
      documentInput(document, context, { storageKey: document.storage_key ?? info.key }),
    );
    await resources.knowledge.upsertSegments(
      documentId,
      segments.map((segment, segmentIndex) => ({
        segmentIndex,
        text: segment.text,
        tokenCount: segment.token_count,
        headingPath: segment.heading_path,
      })),
      { executionId: context.executionId, total: segments.length },
    );
    return [{ payload: { storage_key: info.key, segment_count: segments.length } }];
  },
});

export interface SegmentValue {
  text: string;
  token_count: number;
  heading_path: string[];
}

/** A segment as smart_segmenter emits it; a clear failure for anything else. */
export function readSegment(value: unknown, where: string): SegmentValue {
  const segment = value as Partial<SegmentValue> | null;
  if (
    !segment ||
    typeof segment.text !== 'string' ||
    typeof segment.token_count !== 'number' ||
    !Array.isArray(segment.heading_path) ||
    !segment.heading_path.every((heading) => typeof heading === 'string')
  ) {
    throw new Error(`${where} is not a segment {text, token_count, heading_path}`);
  }
  return { text: segment.text, token_count: segment.token_count, heading_path: segment.heading_path };
}

function readSegments(value: unknown): SegmentValue[] {
  if (!Array.isArray(value)) throw new Error('input needs a `segments` array (the smart_segmenter payload)');
  return value.map((segment, index) => readSegment(segment, `segments[${index}]`));
}
