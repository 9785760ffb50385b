import { Type } from 'typebox';
import { type AdapterOutput, defineAdapter } from '../adapter.js';
import { SegmentSchema } from './smart-segmenter.js';

export const segmentPublisher = defineAdapter({
  type: 'segment_publisher',
  group: 'markdown',
  summary: 'Fan out: one message per segment, to the step destination or the next stage.',
  description:
    'Reads the smart_segmenter payload and emits `{segment, segment_index, total}` for each segment, in order, ' +
    'each routed by an explicit destination (the step `destination`, else the next stage). metadata.document passes through. ' +
    'A page without segments emits nothing.',
  config: Type.Object({}, { additionalProperties: false }),
  input: Type.Object({ segments: Type.Array(SegmentSchema) }),
  output: Type.Object({
    segment: SegmentSchema,
    segment_index: Type.Integer({ minimum: 0 }),
    total: Type.Integer({ minimum: 1, description: 'segments of the same document' }),
  }),
  fanOut: true,
  create: () => async (payload, context) => {
    if (!Array.isArray(payload.segments))
      throw new Error('input needs a `segments` array (the smart_segmenter payload)');
    const segments: unknown[] = payload.segments;
    function* messages(): Generator<AdapterOutput> {
      for (const [segmentIndex, segment] of segments.entries()) {
        if (context.signal.aborted) return;
        yield {
          payload: { segment, segment_index: segmentIndex, total: segments.length },
          ...(context.destination ? { destination: context.destination } : {}),
        };
      }
    }
    return messages();
  },
});
