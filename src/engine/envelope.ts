/**
 * The queue message envelope (spec 2.1): msgpack on the wire; a payload of 16 KB or more is
 * written to the object store and travels as `{"__ref__": key}`, rehydrated on consumption.
 */
import { Decoder, Encoder } from '@msgpack/msgpack';
import type { ObjectStore } from '../storage/object-store.js';
import { createEnvelopeReader } from './envelope-reader.js';

export interface Envelope {
  message_id: string;
  /** The parent lineage entry (the message this one was produced from); '' for an init message. */
  correlation_id: string;
  execution_id: string;
  route_id: string;
  /** Name of the last adapter stage that emitted the message ('init' for the init message). */
  stage: string;
  /** ISO 8601, UTC, microseconds. */
  timestamp: string;
  payload: Record<string, unknown>;
  metadata: Record<string, unknown>;
  /**
   * Generations since the init or replayed message this one descends from (absent: 0). Weir's
   * addition to spec 2.1: a message past the `max_lineage_depth` setting fails, so a cycle of
   * routes ends.
   */
  depth?: number;
  /**
   * The W3C trace context of the span that made this message (Weir's addition to spec 2.1,
   * present only while tracing is on): a stage's span for the message is its child.
   */
  traceparent?: string;
  /** Batch messages (spec 2.1 rule 4). */
  batch_id?: string;
  messages?: Envelope[];
}

export const INLINE_PAYLOAD_LIMIT = 16 * 1024;

// One encoder and one decoder for every envelope: the package's encode()/decode() build a new
// instance (and a new 2 KB buffer) per call, which cost more than encoding a small envelope.
// Both are re-entrant (a nested call gets a clone), and encode() returns a copy of the buffer.
const encoder = new Encoder();
const decoder = new Decoder();
/** An envelope's top level without the library's garbage for short strings (envelope-reader.ts). */
const readEnvelope = createEnvelopeReader(decoder);

/** The object key an offloaded payload is written to. */
export function payloadKey(envelope: Pick<Envelope, 'execution_id' | 'message_id'>): string {
  return `${envelope.execution_id}/_payloads/${envelope.message_id}.msgpack`;
}

export function isPayloadReference(payload: unknown): payload is { __ref__: string } {
  return (
    payload !== null &&
    typeof payload === 'object' &&
    Object.keys(payload).length === 1 &&
    typeof (payload as { __ref__?: unknown }).__ref__ === 'string'
  );
}

/**
 * Envelope -> bytes. Offloads a large payload first (idempotent: the key derives from the
 * message id, so a retried publish rewrites the same object).
 */
export async function encodeEnvelope(envelope: Envelope, store: ObjectStore): Promise<Uint8Array> {
  // The whole envelope under the limit means its payload is too: one encoding on the common
  // path. Measured in the encoder's own buffer, and copied only when it is the result. A
  // payload surely over the limit (a page's HTML or markdown) skips it: that encoding would be
  // thrown away, its every string counted and copied for nothing.
  if (payloadStringsLength(envelope.payload) < INLINE_PAYLOAD_LIMIT) {
    const shared = encoder.encodeSharedRef(envelope);
    if (shared.byteLength < INLINE_PAYLOAD_LIMIT) return shared.slice();
  }
  const payloadBytes = encoder.encode(envelope.payload);
  // Large metadata around a small payload (rare): the envelope stays whole.
  if (payloadBytes.byteLength < INLINE_PAYLOAD_LIMIT) return encoder.encode(envelope);
  const key = payloadKey(envelope);
  await store.put(key, payloadBytes, {
    contentType: 'application/msgpack',
    metadata: { execution_id: envelope.execution_id, route_id: envelope.route_id, kind: 'offloaded_payload' },
  });
  return encoder.encode({ ...envelope, payload: { __ref__: key } });
}

/**
 * The length of the payload's strings down to three levels (a segmenter's `segments[i].text`),
 * a lower bound of its msgpack size in bytes (a UTF-16 code unit is at least one byte of
 * UTF-8), counted only until it reaches the limit.
 */
export function payloadStringsLength(payload: unknown, levels = 3): number {
  if (payload === null || typeof payload !== 'object' || levels === 0) return 0;
  // Binary is written as its bytes (and is not walked element by element).
  if (ArrayBuffer.isView(payload)) return payload.byteLength;
  let length = 0;
  for (const value of Array.isArray(payload) ? payload : Object.values(payload)) {
    length += typeof value === 'string' ? value.length : payloadStringsLength(value, levels - 1);
    if (length >= INLINE_PAYLOAD_LIMIT) break;
  }
  return length;
}

/**
 * An encoder for a run of envelopes that share most fields (a message's outputs: the same
 * correlation_id, execution_id, stage, timestamp, metadata and depth). Each field is encoded
 * as its key and value bytes; a field whose value is the same as in the previous envelope
 * (the same string or number, or the same object) reuses the bytes. The result is the very
 * bytes encodeEnvelope writes (a msgpack map is its header, then its pairs in key order), at
 * a fraction of the cost for a fan-out's outputs. Valid for one run only: an object field is
 * recognised by identity, so it must not change between the calls. Envelopes of 16 or more
 * fields, and those at the inline limit, go through encodeEnvelope.
 *
 * A field that changed since the previous envelope (the message id and payload of every
 * output) is written to a scratch buffer kept for the run, not kept as bytes of its own: an
 * envelope is then one allocation, its result, where it was three (garbage on the engine's
 * busiest thread, 100,000 envelopes for a fan-out of 100,000).
 *
 * Synchronous: an envelope it does not encode (16 or more fields, or at the inline limit)
 * is answered undefined, for encodeEnvelope (which offloads a large payload). An async
 * encoder cost each output of a fan-out a promise and a turn of the microtask queue.
 */
export function envelopeRunEncoder(): (envelope: Envelope) => Uint8Array | undefined {
  const cached = new Map<string, { value: unknown; bytes: Uint8Array }>();
  let scratch = new Uint8Array(1024);
  // The parts of the envelope being encoded, reused from one envelope to the next: cached
  // pair bytes, or (null) a range of the scratch buffer.
  const partBytes: Array<Uint8Array | null> = [];
  const partStart: number[] = [];
  const partLength: number[] = [];
  return (envelope) => {
    const keys = Object.keys(envelope);
    if (keys.length > 15) return undefined;
    let scratchUsed = 0;
    let size = 1;
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index] as string;
      const value = (envelope as unknown as Record<string, unknown>)[key];
      const entry = cached.get(key);
      if (entry && entry.value === value && entry.bytes !== CHANGED) {
        partBytes[index] = entry.bytes;
        size += entry.bytes.byteLength;
        continue;
      }
      const keyBytes = keyBytesOf(key);
      // A view of the encoder's buffer, valid until its next call: copied at once.
      const valueBytes = encoder.encodeSharedRef(value);
      const length = keyBytes.byteLength + valueBytes.byteLength;
      if (!entry || entry.value === value) {
        // First seen in this run, or the same as in the previous envelope after a change:
        // kept, as most fields stay the same for the whole run.
        const pair = new Uint8Array(length);
        pair.set(keyBytes, 0);
        pair.set(valueBytes, keyBytes.byteLength);
        cached.set(key, { value, bytes: pair });
        partBytes[index] = pair;
      } else {
        // Changed: in the scratch buffer for this envelope only; the next one compares with it.
        entry.value = value;
        entry.bytes = CHANGED;
        if (scratchUsed + length > scratch.byteLength) {
          const grown = new Uint8Array(Math.max(2 * scratch.byteLength, scratchUsed + length));
          grown.set(scratch.subarray(0, scratchUsed), 0);
          scratch = grown;
        }
        scratch.set(keyBytes, scratchUsed);
        scratch.set(valueBytes, scratchUsed + keyBytes.byteLength);
        partBytes[index] = null;
        partStart[index] = scratchUsed;
        scratchUsed += length;
      }
      partLength[index] = length;
      size += length;
    }
    if (size >= INLINE_PAYLOAD_LIMIT) return undefined;
    const bytes = new Uint8Array(size);
    bytes[0] = 0x80 | keys.length; // fixmap: up to 15 pairs
    let offset = 1;
    for (let index = 0; index < keys.length; index++) {
      const part = partBytes[index];
      if (part) {
        bytes.set(part, offset);
        offset += part.byteLength;
      } else {
        const start = partStart[index] as number;
        const length = partLength[index] as number;
        bytes.set(scratch.subarray(start, start + length), offset);
        offset += length;
      }
    }
    return bytes;
  };
}

/** The cached bytes of a field that changed in the previous envelope: it has none kept. */
const CHANGED = new Uint8Array(0);

/** Envelope keys as msgpack strings, encoded once each. */
const encodedKeys = new Map<string, Uint8Array>();

function keyBytesOf(key: string): Uint8Array {
  let bytes = encodedKeys.get(key);
  if (!bytes) {
    bytes = encoder.encode(key);
    // Envelope fields are a fixed set; a bound all the same (the map is shared by every run).
    if (encodedKeys.size < 64) encodedKeys.set(key, bytes);
  }
  return bytes;
}

/** Bytes -> envelope with its payload rehydrated. Throws on malformed input. */
export async function decodeEnvelope(bytes: Uint8Array, store: ObjectStore): Promise<Envelope> {
  const envelope = decodeEnvelopeInline(bytes);
  if (isPayloadReference(envelope.payload)) await rehydratePayload(envelope, store);
  return envelope;
}

/**
 * Bytes -> envelope, its payload still a reference when it was offloaded (isPayloadReference,
 * then rehydratePayload). Throws on malformed input. For a stage's every message: most carry
 * their payload, and an async decode cost each of them a promise and a suspended frame.
 */
export function decodeEnvelopeInline(bytes: Uint8Array): Envelope {
  const envelope = readEnvelope(bytes) as Envelope;
  if (envelope === null || typeof envelope !== 'object' || typeof envelope.message_id !== 'string') {
    throw new Error('not a Weir envelope');
  }
  return envelope;
}

/** An offloaded payload read back from the store into its envelope. */
export async function rehydratePayload(envelope: Envelope, store: ObjectStore): Promise<void> {
  const payload = envelope.payload;
  if (!isPayloadReference(payload)) return;
  envelope.payload = decoder.decode(await store.get(payload.__ref__)) as Record<string, unknown>;
}

/** ISO 8601 UTC with microseconds, e.g. 2026-11-22T03:04:05.123456Z. */
export function timestampWithMicroseconds(now: Date, microseconds = 0): string {
  const iso = now.toISOString(); // ...05.123Z
  const extra = String(Math.max(0, Math.min(999, Math.floor(microseconds)))).padStart(3, '0');
  return `${iso.slice(0, -1)}${extra}Z`;
}
