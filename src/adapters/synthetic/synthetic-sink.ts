import { setTimeout as sleep } from 'node:timers/promises';
import { Type } from 'typebox';
import { defineAdapter } from '../adapter.js';

export const syntheticSink = defineAdapter({
  type: 'synthetic_sink',
  group: 'synthetic',
  summary: 'Terminal stage: hold the handler slot for `work_ms`, record nothing (or one object per message).',
  description:
    'Simulates work of a known duration so engine throughput and concurrency limits can be measured. ' +
    'Emits no output; lineage still records each message it consumed. With `write_objects`, writes each ' +
    'input as a stage output object `<message_id>.json` (with its sidecar and catalogue row), so a message ' +
    'processed twice rewrites the same object.',
  config: Type.Object(
    {
      work_ms: Type.Integer({
        minimum: 0,
        maximum: 600_000,
        default: 0,
        description: 'milliseconds each message holds its handler slot',
      }),
      write_objects: Type.Boolean({
        default: false,
        description: 'write each input as a stage output object named after its message id',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({}, { description: 'any payload' }),
  output: Type.Object({}, { description: 'none: the sink emits nothing' }),
  terminal: true,
  create: (config) => async (payload, context) => {
    if (config.work_ms > 0) {
      await sleep(config.work_ms, undefined, { signal: context.signal }).catch((error: unknown) => {
        if ((error as Error).name !== 'AbortError') throw error;
      });
    }
    if (config.write_objects)
      await context.writeObject(`${context.messageId}.json`, JSON.stringify(payload), {
        contentType: 'application/json',
      });
    return [];
  },
});
