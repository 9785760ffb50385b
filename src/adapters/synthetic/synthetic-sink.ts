import { setTimeout as sleep } from 'node:timers/promises';
import { Type } from 'typebox';
import { defineAdapter, PermanentFailure } from '../adapter.js';

export const syntheticSink = defineAdapter({
  type: 'synthetic_sink',
  group: 'synthetic',
  summary: 'Terminal stage: hold the handler slot for `work_ms`, record nothing (or one object per message).',
  description:
    'Simulates work of a known duration so engine throughput and concurrency limits can be measured. ' +
    'Emits no output; lineage still records each message it consumed. With `write_objects`, writes each ' +
    'input as a stage output object `<message_id>.json` (with its sidecar and catalogue row), so a message ' +
    'processed twice rewrites the same object. With `fail_every`, fails chosen messages, so how executions ' +
    'end and how failures are retried can be tested with known outcomes.',
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
      fail_every: Type.Integer({
        minimum: 0,
        default: 0,
        description:
          'fail each message whose payload `index` is a multiple of this (1 fails every message; 0 never fails)',
      }),
      failure: Type.Union([Type.Literal('transient'), Type.Literal('permanent')], {
        default: 'transient',
        description: '`transient` failures are retried by the step retry policy; `permanent` ones are not',
      }),
    },
    { additionalProperties: false },
  ),
  input: Type.Object({}, { description: 'any payload' }),
  output: Type.Object({}, { description: 'none: the sink emits nothing' }),
  terminal: true,
  create: (config) => async (payload, context) => {
    const index = typeof payload.index === 'number' ? payload.index : 0;
    if (config.fail_every > 0 && index % config.fail_every === 0) {
      const reason = `synthetic failure of message ${index}`;
      throw config.failure === 'permanent' ? new PermanentFailure(reason) : new Error(reason);
    }
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
