import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decode, encode } from '@msgpack/msgpack';
import { describe, expect, it } from 'vitest';
import { createFilesystemObjectStore } from '../storage/fs.js';
import {
  decodeEnvelope,
  type Envelope,
  encodeEnvelope,
  envelopeRunEncoder,
  INLINE_PAYLOAD_LIMIT,
  payloadStringsLength,
  timestampWithMicroseconds,
} from './envelope.js';

const base: Envelope = {
  message_id: '01939b7a-0000-7000-8000-000000000001',
  correlation_id: '',
  execution_id: '01939b7a-0000-7000-8000-0000000000e1',
  route_id: 'r',
  stage: 'init',
  timestamp: '2026-11-22T00:00:00.000000Z',
  payload: { url: 'http://example.test/' },
  metadata: { origin: 'test' },
};

describe('envelope', () => {
  it('travels inline as msgpack below 16 KB', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'weir-envelope-'));
    const store = createFilesystemObjectStore(root);
    const bytes = await encodeEnvelope(base, store);
    expect(decode(bytes)).toEqual(base);
    expect(await decodeEnvelope(bytes, store)).toEqual(base);
    expect((await store.list()).objects).toEqual([]);
    await rm(root, { recursive: true, force: true });
  });

  it('offloads a payload of 16 KB or more as {"__ref__": key} and rehydrates it', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'weir-envelope-'));
    const store = createFilesystemObjectStore(root);
    const large = { ...base, payload: { html: 'x'.repeat(20_000) } };
    const bytes = await encodeEnvelope(large, store);
    const wire = decode(bytes) as Envelope;
    expect(wire.payload).toEqual({ __ref__: `${base.execution_id}/_payloads/${base.message_id}.msgpack` });
    expect(bytes.byteLength).toBeLessThan(1024);
    expect(await decodeEnvelope(bytes, store)).toEqual(large);
    await rm(root, { recursive: true, force: true });
  });

  it("offloads a segmenter's nested segments of 16 KB or more, rehydrated whole", async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'weir-envelope-'));
    const store = createFilesystemObjectStore(root);
    const segments = Array.from({ length: 40 }, (_, index) => ({ index, text: `é${'y'.repeat(499)}` }));
    const large = { ...base, payload: { segments } };
    expect(payloadStringsLength(large.payload)).toBeGreaterThanOrEqual(INLINE_PAYLOAD_LIMIT);
    const bytes = await encodeEnvelope(large, store);
    expect((decode(bytes) as Envelope).payload).toEqual({
      __ref__: `${base.execution_id}/_payloads/${base.message_id}.msgpack`,
    });
    expect(await decodeEnvelope(bytes, store)).toEqual(large);
    await rm(root, { recursive: true, force: true });
  });

  it("counts a payload's strings as a lower bound of its msgpack size, binary by its bytes", () => {
    const payloads: Array<Record<string, unknown>> = [
      { html: 'x'.repeat(20_000) },
      { text: 'ø€😀'.repeat(3_000), n: 1 },
      { segments: [{ text: 'a'.repeat(9_000) }, { text: 'b'.repeat(9_000), headings: ['h'] }] },
      { deep: { deeper: { deepest: { text: 'z'.repeat(30_000) } } } },
      { bytes: new Uint8Array(2_000_000), note: 'binary' },
      { empty: [], nothing: null, flag: true },
    ];
    for (const payload of payloads)
      expect(payloadStringsLength(payload)).toBeLessThanOrEqual(encode(payload).byteLength);
    // Deeper than three levels is not walked; binary is counted, not walked byte by byte, and
    // the count stops once it reaches the limit (the note after the bytes is not looked at).
    expect(payloadStringsLength(payloads[3])).toBe(0);
    expect(payloadStringsLength(payloads[4])).toBe(2_000_000);
  });

  it('refuses bytes that are not an envelope', async () => {
    const store = createFilesystemObjectStore(await mkdtemp(path.join(tmpdir(), 'weir-envelope-')));
    await expect(decodeEnvelope(new Uint8Array([0xc1]), store)).rejects.toThrow();
    await expect(decodeEnvelope(new Uint8Array([0x01]), store)).rejects.toThrow('not a Weir envelope');
  });

  it('formats timestamps with microseconds', () => {
    expect(timestampWithMicroseconds(new Date('2026-11-22T03:04:05.123Z'), 456)).toBe(
      '2026-11-22T03:04:05.123456Z',
    );
  });
});

describe('envelopeRunEncoder', () => {
  it('writes the bytes encodeEnvelope writes, for a run of envelopes sharing fields', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'weir-envelope-run-'));
    const store = createFilesystemObjectStore(root);
    const runEncoder = envelopeRunEncoder();
    // What it does not encode (a payload past the inline limit) goes to encodeEnvelope.
    let declined = 0;
    const encodeRun = async (envelope: Envelope) => {
      const bytes = runEncoder(envelope);
      if (bytes) return bytes;
      declined++;
      return encodeEnvelope(envelope, store);
    };
    const metadata = { origin: 'test', nested: { a: [1, 2] } };
    const envelopes: Envelope[] = Array.from({ length: 50 }, (_, index) => ({
      ...base,
      message_id: `01939b7a-0000-7000-8000-${String(index).padStart(12, '0')}`,
      route_id: index % 7 === 0 ? 'other' : 'r',
      payload: { index, text: 'é'.repeat(index), none: undefined, list: [index, null] },
      // The same object for most, a new one (same content) or another for some.
      metadata: index % 5 === 0 ? { ...metadata } : index % 11 === 0 ? { other: index } : metadata,
      depth: index % 3 === 0 ? 2 : 1,
      ...(index % 4 === 0 ? { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` } : {}),
    }));
    for (const envelope of envelopes)
      expect(Buffer.from(await encodeRun(envelope))).toEqual(
        Buffer.from(await encodeEnvelope(envelope, store)),
      );
    // A payload past the inline limit is offloaded as encodeEnvelope does it.
    const large = {
      ...base,
      message_id: '01939b7a-0000-7000-8000-0000000000ff',
      payload: { text: 'x'.repeat(20_000) },
    };
    const bytes = await encodeRun(large);
    expect(bytes.byteLength).toBeLessThan(INLINE_PAYLOAD_LIMIT);
    expect(await decodeEnvelope(bytes, store)).toEqual(large);
    expect(declined).toBe(1);
    await rm(root, { recursive: true, force: true });
  });
});
