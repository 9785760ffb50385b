import { Type } from 'typebox';
import { type AdapterOutput, defineAdapter } from '../adapter.js';

export const syntheticFanout = defineAdapter({
  type: 'synthetic_fanout',
  group: 'synthetic',
  summary: 'Emit `count` synthetic children to a destination through the real fan-out path.',
  description:
    'Load generator for the engine. Every input message yields `count` outputs, each carrying ' +
    '`index`, `total` and a `padding` string of `payload_bytes` characters, routed to the step destination (or the next stage). ' +
    'Outputs are produced lazily so a large count does not sit in memory at once.',
  config: Type.Object(
    {
      count: Type.Integer({
        minimum: 1,
        maximum: 10_000_000,
        default: 10,
        description: 'children per input',
      }),
      payload_bytes: Type.Integer({
        minimum: 0,
        maximum: 1_048_576,
        default: 0,
        description: 'filler bytes in each child payload (bodies of 16 KB and more are offloaded to storage)',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({}, { description: 'any payload; its fields are ignored' }),
  output: Type.Object({
    index: Type.Integer({ minimum: 0, description: 'position of this child, from 0' }),
    total: Type.Integer({ minimum: 1, description: 'children emitted for the same input (count)' }),
    padding: Type.String({ description: 'payload_bytes characters of filler' }),
  }),
  fanOut: true,
  singleOutput: (config) => config.count <= 1,
  create: (config) => {
    const padding = 'x'.repeat(config.payload_bytes);
    return async (_payload, context) => {
      function* children(): Generator<AdapterOutput> {
        for (let index = 0; index < config.count; index++) {
          if (context.signal.aborted) return;
          yield {
            payload: { index, total: config.count, padding },
            ...(context.destination ? { destination: context.destination } : {}),
          };
        }
      }
      return children();
    };
  },
});
