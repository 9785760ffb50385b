/**
 * Array query parameters in Postgres's binary array format (what `array_send` writes and
 * `array_recv` reads: bytes copied, not parsed). Drivers pass parameters as text by default:
 * every string is measured and escaped character by character in JavaScript, then parsed
 * again by Postgres (about 1 ms for a 384-float vector in PGlite, and the largest single cost
 * of writing lineage rows with their envelopes and webhook deliveries with their bodies). PGlite
 * takes the bytes through `toPgliteParameter`; node-postgres sends a Buffer parameter in binary
 * format, which the `toPostgres` hook gives it. The statement must cast the parameter to the
 * array type (`$1::text[]`), so the server reads it with that type's `array_recv`.
 */

type ElementKind = 'real' | 'float8' | 'int4' | 'timestamptz' | 'uuid' | 'text' | 'bytea';
type ElementValue = number | Date | string | Uint8Array;

/** Element type OIDs of the binary format. */
const ELEMENT_OID: Record<ElementKind, number> = {
  real: 700,
  float8: 701,
  int4: 23,
  timestamptz: 1184,
  uuid: 2950,
  text: 25,
  bytea: 17,
};

/** Milliseconds from the Unix epoch to Postgres's (2000-01-01 UTC), where timestamps count from. */
const POSTGRES_EPOCH_MS = Date.UTC(2000, 0, 1);

export class ArrayParameter {
  constructor(
    readonly kind: ElementKind,
    readonly values: ArrayLike<number> | ReadonlyArray<ElementValue | null>,
  ) {}

  /** node-postgres: the binary form, which it sends as a binary-format parameter. */
  toPostgres(): Buffer {
    return this.toBinary();
  }

  /**
   * The binary form: a 20-byte header (one dimension, has-nulls flag, element type OID,
   * length, lower bound 1), then each element as its byte length (-1 for null) and its bytes.
   * Sized first and written into one buffer: no allocation per element (this runs for every
   * lineage row and webhook delivery written).
   */
  toBinary(): Buffer {
    const { kind, values } = this;
    const count = values.length;
    let size = 20 + 4 * count;
    let hasNulls = 0;
    for (let index = 0; index < count; index++) {
      const value = values[index];
      if (value === null || value === undefined) hasNulls = 1;
      else size += elementSize(kind, value);
    }
    const bytes = Buffer.allocUnsafe(size);
    bytes.writeInt32BE(1, 0);
    bytes.writeInt32BE(hasNulls, 4);
    bytes.writeInt32BE(ELEMENT_OID[kind], 8);
    bytes.writeInt32BE(count, 12);
    bytes.writeInt32BE(1, 16);
    let offset = 20;
    for (let index = 0; index < count; index++) {
      const value = values[index];
      if (value === null || value === undefined) {
        offset = bytes.writeInt32BE(-1, offset);
        continue;
      }
      const length = writeElement(kind, value, bytes, offset + 4);
      bytes.writeInt32BE(length, offset);
      offset += 4 + length;
    }
    return bytes;
  }
}

/** A `real[]` parameter (embedding vectors). */
export const realArray = (values: Float32Array | readonly number[]) => new ArrayParameter('real', values);
/** A `float8[]` parameter: each double's 8 bytes, so the database reads the very value JavaScript held. */
export const float8Array = (values: ArrayLike<number>) => new ArrayParameter('float8', values);
/** An `int4[]` parameter; null elements allowed. */
export const int4Array = (values: ReadonlyArray<number | null>) => new ArrayParameter('int4', values);
/** A `timestamptz[]` parameter; null elements allowed. */
export const timestamptzArray = (values: ReadonlyArray<Date | null>) =>
  new ArrayParameter('timestamptz', values);
/** A `uuid[]` parameter; null elements allowed. */
export const uuidArray = (values: ReadonlyArray<string | null>) => new ArrayParameter('uuid', values);
/**
 * A `text[]` parameter; null elements allowed. An element may be given as its UTF-8 bytes
 * already (a webhook body, encoded once for the journal, its row and the POST).
 */
export const textArray = (values: ReadonlyArray<string | Uint8Array | null>) =>
  new ArrayParameter('text', values);
/** A `bytea[]` parameter. */
export const byteaArray = (values: ReadonlyArray<Uint8Array | null>) => new ArrayParameter('bytea', values);

/**
 * A `real[]` value read in the same binary form (`array_send(column)`, a bytea): each element's
 * four bytes as the database holds them. The text form costs the database float4out's decimal
 * digits and the driver a parse per element (the largest part of the in-memory search index's
 * fill, issue 35); these are the same float32 values, bit for bit (keyword-memory-index.test.ts
 * compares them with PGlite's parse of the text). One dimension (or empty) and no NULL
 * elements, as embeddings are written; anything else throws.
 */
export function realArrayFromBinary(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // An empty array is the 12-byte header alone (no dimensions).
  if (bytes.byteLength === 12 && view.getInt32(0) === 0) return new Float32Array(0);
  const count = bytes.byteLength >= 20 ? view.getInt32(12) : -1;
  if (
    count < 0 ||
    view.getInt32(0) !== 1 ||
    view.getInt32(4) !== 0 ||
    view.getInt32(8) !== ELEMENT_OID.real ||
    bytes.byteLength !== 20 + 8 * count
  ) {
    throw new TypeError('not a one-dimensional real[] without NULL elements in binary form');
  }
  const values = new Float32Array(count);
  for (let index = 0, offset = 24; index < count; index++, offset += 8)
    values[index] = view.getFloat32(offset);
  return values;
}

function elementSize(kind: ElementKind, value: ElementValue): number {
  switch (kind) {
    case 'real':
    case 'int4':
      return 4;
    case 'float8':
    case 'timestamptz':
      return 8;
    case 'uuid':
      return 16;
    case 'text':
      return typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : (value as Uint8Array).byteLength;
    case 'bytea':
      return (value as Uint8Array).byteLength;
  }
}

/** Writes one element's bytes at `offset`; returns how many. */
function writeElement(kind: ElementKind, value: ElementValue, bytes: Buffer, offset: number): number {
  switch (kind) {
    case 'real':
      bytes.writeFloatBE(value as number, offset);
      return 4;
    case 'float8':
      bytes.writeDoubleBE(value as number, offset);
      return 8;
    case 'int4':
      bytes.writeInt32BE(value as number, offset);
      return 4;
    case 'timestamptz': {
      // Microseconds since 2000-01-01 UTC as a signed 64-bit integer. A double holds them
      // exactly within 2^53 (about 1715 to 2285), written in two halves; beyond, as a BigInt.
      const milliseconds = (value as Date).getTime();
      if (Number.isNaN(milliseconds)) throw new TypeError('not a valid date');
      const microseconds = (milliseconds - POSTGRES_EPOCH_MS) * 1000;
      if (!Number.isSafeInteger(microseconds)) {
        bytes.writeBigInt64BE(BigInt(milliseconds - POSTGRES_EPOCH_MS) * 1000n, offset);
        return 8;
      }
      const high = Math.floor(microseconds / 2 ** 32);
      bytes.writeInt32BE(high, offset);
      bytes.writeUInt32BE(microseconds - high * 2 ** 32, offset + 4);
      return 8;
    }
    case 'uuid':
      writeUuid(value as string, bytes, offset);
      return 16;
    case 'text':
      if (typeof value !== 'string') {
        bytes.set(value as Uint8Array, offset);
        return (value as Uint8Array).byteLength;
      }
      return bytes.write(value, offset, 'utf8');
    case 'bytea':
      bytes.set(value as Uint8Array, offset);
      return (value as Uint8Array).byteLength;
  }
}

/** Hex digit values by character code; -1 for anything else. */
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let digit = 0; digit < 16; digit++) {
  HEX_VALUE[digit.toString(16).charCodeAt(0)] = digit;
  HEX_VALUE[digit.toString(16).toUpperCase().charCodeAt(0)] = digit;
}

/** Writes the 16 bytes of a UUID in its canonical text form (hyphens optional) at `offset`. */
function writeUuid(text: string, bytes: Buffer, offset: number): void {
  const hyphenated = text.length === 36;
  if (!hyphenated && text.length !== 32) throw new TypeError(`not a UUID: ${text}`);
  let position = 0;
  for (let index = 0; index < 16; index++) {
    // Hyphens sit before bytes 4, 6, 8 and 10 (positions 8, 13, 18 and 23).
    if (hyphenated && (index === 4 || index === 6 || index === 8 || index === 10)) {
      if (text.charCodeAt(position) !== 45) throw new TypeError(`not a UUID: ${text}`);
      position++;
    }
    const high = HEX_VALUE[text.charCodeAt(position)] ?? -1;
    const low = HEX_VALUE[text.charCodeAt(position + 1)] ?? -1;
    if (high < 0 || low < 0) throw new TypeError(`not a UUID: ${text}`);
    bytes[offset + index] = (high << 4) | low;
    position += 2;
  }
}

/**
 * The binary forms toPgliteParameter made, each for one statement: nothing else holds them, so
 * their memory may be handed to the PGlite thread instead of copied (pglite-thread.ts).
 */
const singleUse = new WeakSet<Uint8Array>();

/** What the PGlite driver sends for a parameter: the binary form of an ArrayParameter, else the value. */
export function toPgliteParameter(value: unknown): unknown {
  if (!(value instanceof ArrayParameter)) return value;
  const bytes = value.toBinary();
  singleUse.add(bytes);
  return bytes;
}

/**
 * The memory of `parameters` that may be moved to another thread rather than copied: the
 * binary forms toPgliteParameter made, where each owns its whole ArrayBuffer (a small Buffer is
 * a slice of Node's shared pool, which must stay). Copying a webhook journal's bodies to the
 * PGlite thread cost several times as much as moving them.
 */
export function movableParameterMemory(parameters: readonly unknown[]): ArrayBuffer[] {
  const movable: ArrayBuffer[] = [];
  for (const value of parameters)
    if (
      value instanceof Uint8Array &&
      singleUse.has(value) &&
      value.byteOffset === 0 &&
      value.byteLength === value.buffer.byteLength &&
      value.buffer instanceof ArrayBuffer
    ) {
      singleUse.delete(value);
      movable.push(value.buffer);
    }
  return movable;
}
