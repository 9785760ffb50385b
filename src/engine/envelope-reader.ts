/**
 * The top level of an envelope read without the msgpack library's string decoding: a stage
 * decodes every message it takes, and the library builds each short string value from an
 * array of char codes (about 900 bytes of garbage for a 36-character id, three ids, a
 * timestamp, a route and a stage an envelope), on the engine's busiest thread. Here an
 * ASCII string field is read as latin1 (the same characters), and one that has the bytes of
 * the same field of the previous envelope read (the execution id, the parent's id, the route,
 * the stage and the timestamp of a fan-out's outputs) is that envelope's string again. A
 * payload or metadata that is a flat map (up to 15 pairs of ASCII keys and ASCII strings,
 * small positive integers, booleans or nulls: an execution's metadata, with its config id and
 * 64-character hash, is on every message) is read the same way, each pair's key and value
 * compared with the same pair of the previous envelope's. Every other value (nested
 * payloads, batch messages) goes to the library, which also takes the whole envelope when its
 * top level is not the usual shape (a map of up to 15 fields whose keys are known envelope
 * fields and whose string values are ASCII).
 */
import type { Decoder } from '@msgpack/msgpack';

/** The fields an envelope's top level may have (envelope.ts). */
const FIELDS = [
  'message_id',
  'correlation_id',
  'execution_id',
  'route_id',
  'stage',
  'timestamp',
  'payload',
  'metadata',
  'depth',
  'traceparent',
  'batch_id',
  'messages',
] as const;
const FIELD_BYTES = FIELDS.map((field) => Buffer.from(field, 'latin1'));

/** Bytes of a field's last string kept to compare the next with (ids and timestamps fit). */
const KEPT_BYTES = 64;

/** The last string read for a field, with its bytes in a buffer reused for the field. */
interface LastString {
  bytes: Uint8Array;
  length: number;
  text: string;
}

const newLastString = (): LastString => ({ bytes: new Uint8Array(KEPT_BYTES), length: -1, text: '' });

/** Pairs of a flat map read here (a fixmap's most): a key and a value kept for each. */
const FLAT_PAIRS = 15;
const PAYLOAD = FIELDS.indexOf('payload');
const METADATA = FIELDS.indexOf('metadata');

export function createEnvelopeReader(decoder: Decoder): (bytes: Uint8Array) => unknown {
  const last: LastString[] = FIELDS.map(newLastString);
  // The previous payload's and metadata's keys and string values, pair by pair.
  const lastOfMap = new Map<number, LastString[]>(
    [PAYLOAD, METADATA].map((field) => [field, Array.from({ length: 2 * FLAT_PAIRS }, newLastString)]),
  );
  return (bytes) => {
    const head = bytes[0] as number;
    if (head < 0x80 || head > 0x8f) return decoder.decode(bytes);
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const envelope: Record<string, unknown> = {};
    let position = 1;
    for (let pair = 0; pair < (head & 0x0f); pair++) {
      const field = fieldAt(bytes, position);
      if (field < 0) return decoder.decode(bytes);
      position += 1 + (FIELD_BYTES[field] as Buffer).byteLength;
      const type = bytes[position] as number;
      let text: string | undefined;
      if ((type >= 0xa0 && type <= 0xbf) || type === 0xd9) {
        const start = position + (type === 0xd9 ? 2 : 1);
        const length = type === 0xd9 ? (bytes[position + 1] as number) : type & 0x1f;
        if (start + length > bytes.byteLength) return decoder.decode(bytes);
        text = readAscii(view, start, length, field, last);
        if (text === undefined) return decoder.decode(bytes);
        position = start + length;
        envelope[FIELDS[field] as string] = text;
      } else if (type <= 0x7f) {
        envelope[FIELDS[field] as string] = type; // a positive fixint: the depth
        position += 1;
      } else {
        const end = skipValue(bytes, position);
        if (end < 0) return decoder.decode(bytes);
        const kept = lastOfMap.get(field);
        envelope[FIELDS[field] as string] =
          type === 0x80
            ? {}
            : ((kept && readFlatMap(view, position, end, kept)) ??
              decoder.decode(bytes.subarray(position, end)));
        position = end;
      }
    }
    if (position !== bytes.byteLength) return decoder.decode(bytes);
    return envelope;
  };
}

/** The index in FIELDS of the fixstr key at `position`, or -1. */
function fieldAt(bytes: Uint8Array, position: number): number {
  const type = bytes[position] as number;
  if (type < 0xa0 || type > 0xbf) return -1;
  const length = type & 0x1f;
  for (let field = 0; field < FIELD_BYTES.length; field++) {
    const candidate = FIELD_BYTES[field] as Buffer;
    if (candidate.byteLength !== length) continue;
    let same = true;
    for (let index = 0; index < length && same; index++)
      same = bytes[position + 1 + index] === candidate[index];
    if (same) return field;
  }
  return -1;
}

/**
 * The ASCII string of `length` bytes at `start`: the previous one of the field when the bytes
 * are the same; undefined when a byte is not ASCII (the library decodes those).
 */
function readAscii(
  view: Buffer,
  start: number,
  length: number,
  field: number,
  last: LastString[],
): string | undefined {
  const previous = last[field] as LastString;
  let same = previous.length === length;
  for (let index = 0; index < length; index++) {
    const byte = view[start + index] as number;
    if (byte > 0x7f) return undefined;
    if (same) same = previous.bytes[index] === byte;
  }
  if (same) return previous.text;
  const text = view.toString('latin1', start, start + length);
  if (length <= KEPT_BYTES) {
    previous.bytes.set(view.subarray(start, start + length));
    previous.length = length;
    previous.text = text;
  } else previous.length = -1;
  return text;
}

/**
 * The flat map from `position` to `end` (a fixmap of ASCII fixstr keys and values that are
 * ASCII strings of up to 255 bytes, positive fixints, nil or booleans), its strings compared
 * with the previous map's pair by pair in `kept`; undefined for any other shape (the library
 * decodes it, and refuses a `__proto__` key).
 */
function readFlatMap(
  view: Buffer,
  position: number,
  end: number,
  kept: LastString[],
): Record<string, unknown> | undefined {
  const head = view[position] as number;
  if (head < 0x80 || head > 0x8f) return undefined;
  const map: Record<string, unknown> = {};
  let at = position + 1;
  for (let pair = 0; pair < (head & 0x0f); pair++) {
    const keyType = view[at] as number;
    if (keyType < 0xa0 || keyType > 0xbf) return undefined;
    const keyLength = keyType & 0x1f;
    if (at + 1 + keyLength > end) return undefined;
    const key = readAscii(view, at + 1, keyLength, 2 * pair, kept);
    if (key === undefined || key === '__proto__') return undefined;
    at += 1 + keyLength;
    const type = view[at] as number;
    if ((type >= 0xa0 && type <= 0xbf) || type === 0xd9) {
      const start = at + (type === 0xd9 ? 2 : 1);
      const length = type === 0xd9 ? (view[at + 1] as number) : type & 0x1f;
      if (start + length > end) return undefined;
      const text = readAscii(view, start, length, 2 * pair + 1, kept);
      if (text === undefined) return undefined;
      map[key] = text;
      at = start + length;
    } else if (type <= 0x7f || type === 0xc0 || type === 0xc2 || type === 0xc3) {
      map[key] = type <= 0x7f ? type : type === 0xc0 ? null : type === 0xc3;
      at += 1;
    } else return undefined;
  }
  return at === end ? map : undefined;
}

/** Where the msgpack value at `position` ends, or -1 when the bytes end first. */
export function skipValue(bytes: Uint8Array, position: number): number {
  let remaining = 1;
  while (remaining > 0) {
    if (position >= bytes.byteLength) return -1;
    remaining--;
    const type = bytes[position] as number;
    if (type <= 0x7f || type >= 0xe0 || type === 0xc0 || type === 0xc2 || type === 0xc3) position += 1;
    else if (type <= 0x8f) {
      remaining += 2 * (type & 0x0f); // fixmap: its pairs
      position += 1;
    } else if (type <= 0x9f) {
      remaining += type & 0x0f; // fixarray: its items
      position += 1;
    } else if (type <= 0xbf)
      position += 1 + (type & 0x1f); // fixstr
    else {
      const width = countWidth(type);
      if (width > 0) {
        // array 16/32, map 16/32: a count of items (pairs for a map)
        const count = bigEndian(bytes, position + 1, width);
        if (count < 0) return -1;
        remaining += type >= 0xde ? 2 * count : count;
        position += 1 + width;
        continue;
      }
      const length = lengthWidth(type);
      if (length > 0) {
        // bin 8/16/32, str 8/16/32: a length, then the bytes; ext 8/16/32: and a type byte
        const size = bigEndian(bytes, position + 1, length);
        if (size < 0) return -1;
        position += 1 + length + size + (type >= 0xc7 && type <= 0xc9 ? 1 : 0);
        continue;
      }
      const fixed = fixedSize(type);
      if (fixed === 0) return -1; // 0xc1: never used
      position += fixed;
    }
  }
  return position <= bytes.byteLength ? position : -1;
}

/** The unsigned big-endian number of `width` bytes at `position`, or -1 past the end. */
function bigEndian(bytes: Uint8Array, position: number, width: number): number {
  if (position + width > bytes.byteLength) return -1;
  let value = 0;
  for (let index = 0; index < width; index++) value = value * 256 + (bytes[position + index] as number);
  return value;
}

/** The width of the item count of array 16/32 and map 16/32; 0 for other types. */
function countWidth(type: number): number {
  if (type === 0xdc || type === 0xde) return 2;
  if (type === 0xdd || type === 0xdf) return 4;
  return 0;
}

/** The width of the byte length of bin, ext and str 8/16/32; 0 for other types. */
function lengthWidth(type: number): number {
  switch (type) {
    case 0xc4:
    case 0xc7:
    case 0xd9:
      return 1;
    case 0xc5:
    case 0xc8:
    case 0xda:
      return 2;
    case 0xc6:
    case 0xc9:
    case 0xdb:
      return 4;
    default:
      return 0;
  }
}

/** The whole size of float 32/64, uint and int 8-64 and fixext 1-16; 0 for other types. */
function fixedSize(type: number): number {
  switch (type) {
    case 0xcc:
    case 0xd0:
      return 2;
    case 0xcd:
    case 0xd1:
      return 3;
    case 0xd4:
      return 3;
    case 0xd5:
      return 4;
    case 0xca:
    case 0xce:
    case 0xd2:
      return 5;
    case 0xd6:
      return 6;
    case 0xcb:
    case 0xcf:
    case 0xd3:
      return 9;
    case 0xd7:
      return 10;
    case 0xd8:
      return 18;
    default:
      return 0;
  }
}
