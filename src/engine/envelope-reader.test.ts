import { Decoder, decode, encode } from '@msgpack/msgpack';
import { describe, expect, it, vi } from 'vitest';
import { createEnvelopeReader, skipValue } from './envelope-reader.js';

const envelope = (index: number): Record<string, unknown> => ({
  message_id: `01939b7a-0000-7000-8000-${String(index).padStart(12, '0')}`,
  correlation_id: index % 9 === 0 ? '' : '01939b7a-0000-7000-8000-0000000000aa',
  execution_id: '01939b7a-0000-7000-8000-0000000000e1',
  // Non-ASCII and long string values go to the library; str8 (32 bytes or more) is read here.
  route_id: index % 7 === 0 ? 'route-é' : index % 5 === 0 ? 'r'.repeat(40) : 'r',
  stage: index % 11 === 0 ? 's'.repeat(300) : 'synthetic_fanout',
  timestamp: '2026-11-22T00:00:00.000000Z',
  payload: {
    index,
    small: -index,
    wide: index * 1_000_003,
    big: 2 ** 40 + index,
    negative: -(2 ** 33) - index,
    ratio: index / 7,
    flag: index % 2 === 0,
    nothing: null,
    text: 'x'.repeat(index * 3),
    list: Array.from({ length: index % 20 }, (_, item) => item),
    map: Object.fromEntries(Array.from({ length: index % 18 }, (_, key) => [`k${key}`, key])),
    bytes: new Uint8Array(index % 300),
  },
  metadata: index % 3 === 0 ? {} : { origin: 'test', nested: { a: [1, 2] } },
  depth: index % 4 === 0 ? 200 : index % 4,
  ...(index % 6 === 0 ? { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` } : {}),
  ...(index % 8 === 0
    ? { batch_id: 'batch-1', messages: [{ message_id: 'm1', payload: { n: index } }] }
    : {}),
});

describe('createEnvelopeReader', () => {
  it('reads every envelope as the msgpack library decodes it', () => {
    const read = createEnvelopeReader(new Decoder());
    for (let index = 0; index < 120; index++) {
      const bytes = encode(envelope(index));
      expect(read(bytes)).toEqual(decode(bytes));
    }
  });

  it('answers what is not an envelope as the library does', () => {
    const read = createEnvelopeReader(new Decoder());
    for (const value of [{ other_field: 'x', message_id: 'm' }, [1, 2], 'text', 7, { message_id: 'é' }])
      expect(read(encode(value))).toEqual(decode(encode(value)));
    const truncated = encode(envelope(1)).subarray(0, 40);
    expect(() => read(truncated)).toThrow();
  });

  it('reads an ASCII envelope itself, giving the library only its payload and metadata', () => {
    const decoder = new Decoder();
    const decodeCalls = vi.spyOn(decoder, 'decode');
    const read = createEnvelopeReader(decoder);
    // Envelope 2: ASCII strings, a map of metadata, a fixint depth; envelope 3: empty metadata.
    for (const index of [2, 3]) {
      const bytes = encode(envelope(index));
      decodeCalls.mockClear();
      expect(read(bytes)).toEqual(decode(bytes));
      const decoded = decodeCalls.mock.calls.map(([argument]) => (argument as Uint8Array).byteLength);
      expect(decoded).toHaveLength(index === 2 ? 2 : 1);
      for (const length of decoded) expect(length).toBeLessThan(bytes.byteLength / 2);
    }
  });
});

describe('createEnvelopeReader on flat maps', () => {
  const flat = (index: number): Record<string, unknown> => ({
    message_id: `01939b7a-0000-7000-8000-${String(index).padStart(12, '0')}`,
    execution_id: '01939b7a-0000-7000-8000-0000000000e1',
    payload: { index: index % 100, total: 100, padding: '', done: index % 2 === 0, none: null },
    metadata: {
      config_id: '01939b7a-0000-7000-8000-0000000000c1',
      config_hash: (index % 3 === 0 ? 'a' : 'b').repeat(64),
      config_version: 1,
      origin: index % 4 === 0 ? 'x'.repeat(200) : 'api',
    },
  });

  it('reads a flat payload and metadata without the library, as the library decodes them', () => {
    const decoder = new Decoder();
    const decodeCalls = vi.spyOn(decoder, 'decode');
    const read = createEnvelopeReader(decoder);
    for (let index = 0; index < 30; index++) {
      const bytes = encode(flat(index));
      expect(read(bytes)).toEqual(decode(bytes));
    }
    expect(decodeCalls).not.toHaveBeenCalled();
  });

  it('gives the library a map of any other shape, and refuses a __proto__ key as it does', () => {
    const decoder = new Decoder();
    const decodeCalls = vi.spyOn(decoder, 'decode');
    const read = createEnvelopeReader(decoder);
    const others = [
      { origin: 'é' }, // not ASCII
      { big: 300 }, // not a fixint
      { negative: -1 },
      { nested: { a: 1 } },
      { é: 'x' }, // a key that is not ASCII
      { ['k'.repeat(40)]: 'x' }, // a key longer than a fixstr
      { long: 'x'.repeat(300) }, // a str16 value
    ];
    for (const metadata of others) {
      const bytes = encode({ ...flat(1), metadata });
      decodeCalls.mockClear();
      expect(read(bytes)).toEqual(decode(bytes));
      expect(decodeCalls).toHaveBeenCalledTimes(1);
    }
    const proto = encode({ ...flat(1), metadata: { ['__proto__']: 'x' } });
    expect(() => read(proto)).toThrow(/__proto__/);
  });
});

describe('skipValue', () => {
  it('finds the end of each msgpack value, and -1 for one cut short', () => {
    const values = [
      0,
      -1,
      127,
      128,
      -33,
      70_000,
      2 ** 40,
      1.5,
      null,
      true,
      'a',
      'b'.repeat(300),
      [1, [2]],
      { a: { b: 1 } },
    ];
    for (const value of values) {
      const bytes = encode(value);
      const padded = new Uint8Array(bytes.byteLength + 3);
      padded.set(bytes, 0);
      expect(skipValue(padded, 0)).toBe(bytes.byteLength);
      if (bytes.byteLength > 1) expect(skipValue(bytes.subarray(0, bytes.byteLength - 1), 0)).toBe(-1);
    }
  });
});
