import { afterAll, describe, expect, it } from 'vitest';
import type { AdapterContext, AdapterOutput } from '../adapter.js';
import { createAdapterTestKit, memoryClaims, memoryFanIn, memorySyncState } from '../adapter-testing.js';
import { createBuiltinRegistry } from '../builtin.js';
import { syntheticFanout } from './synthetic-fanout.js';
import { syntheticSink } from './synthetic-sink.js';

const kit = await createAdapterTestKit();
const resources = kit.resources;
afterAll(() => kit.close());

function context(overrides: Partial<AdapterContext> = {}): AdapterContext {
  return {
    executionId: 'e',
    routeId: 'r',
    stage: 's',
    messageId: 'm',
    correlationId: 'c',
    batchId: undefined,
    metadata: {},
    destination: undefined,
    signal: new AbortController().signal,
    syncState: memorySyncState(),
    claims: memoryClaims(),
    fanIn: memoryFanIn(),
    writeObject: async () => {
      throw new Error('not asked to write');
    },
    ...overrides,
  };
}

async function collect(outputs: Iterable<AdapterOutput> | AsyncIterable<AdapterOutput>) {
  const all: AdapterOutput[] = [];
  for await (const output of outputs) all.push(output);
  return all;
}

describe('synthetic_fanout', () => {
  it('emits count children, each routed to the step destination', async () => {
    const handler = syntheticFanout.create({ count: 3, payload_bytes: 4 }, resources);
    const outputs = await collect(await handler({}, context({ destination: 'sink' })));
    expect(outputs).toEqual(
      [0, 1, 2].map((index) => ({
        payload: { index, total: 3, padding: 'xxxx' },
        destination: 'sink',
      })),
    );
  });

  it('stops emitting once the execution is cancelled', async () => {
    const controller = new AbortController();
    const handler = syntheticFanout.create({ count: 1000, payload_bytes: 0 }, resources);
    const outputs = await handler({}, context({ signal: controller.signal }));
    let seen = 0;
    for await (const _output of outputs) {
      if (++seen === 5) controller.abort();
    }
    expect(seen).toBe(5);
  });

  it('rejects a count of zero and unknown fields', () => {
    const registry = createBuiltinRegistry();
    const check = registry.checkConfig(syntheticFanout, { count: 0, colour: 'red' });
    expect(check.valid).toBe(false);
    expect(check.errors.map((error) => error.path).sort()).toEqual(['', '/count']);
  });

  it('fills defaults', () => {
    const check = createBuiltinRegistry().checkConfig(syntheticFanout, {});
    expect(check).toMatchObject({ valid: true, config: { count: 10, payload_bytes: 0 } });
  });
});

describe('synthetic_sink', () => {
  it('holds its slot for work_ms and emits nothing', async () => {
    const handler = syntheticSink.create(
      { work_ms: 30, write_objects: false, fail_every: 0, failure: 'transient' as const },
      resources,
    );
    const started = performance.now();
    expect(await collect(await handler({ any: 1 }, context()))).toEqual([]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
  });

  it('writes each input as an object named after its message, when asked', async () => {
    const written: Array<{ path: string; body: string }> = [];
    const handler = syntheticSink.create(
      { work_ms: 0, write_objects: true, fail_every: 0, failure: 'transient' as const },
      resources,
    );
    const writeObject: AdapterContext['writeObject'] = async (path, body) => {
      written.push({ path, body: String(body) });
      return {
        key: `e/s/${path}`,
        size: 0,
        content_type: 'application/json',
        sha256: '',
        created_at: '',
        metadata: {},
      };
    };
    expect(await collect(await handler({ index: 7 }, context({ messageId: 'm-7', writeObject })))).toEqual(
      [],
    );
    expect(written).toEqual([{ path: 'm-7.json', body: '{"index":7}' }]);
  });

  it('lets go of its slot when cancelled', async () => {
    const controller = new AbortController();
    const handler = syntheticSink.create(
      { work_ms: 60_000, write_objects: false, fail_every: 0, failure: 'transient' as const },
      resources,
    );
    const pending = handler({}, context({ signal: controller.signal }));
    controller.abort();
    await expect(pending).resolves.toEqual([]);
  });
});
