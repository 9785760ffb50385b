/**
 * Array query parameters that each driver sends in its cheapest form. PGlite passes
 * parameters as text by default: every string is measured character by character in
 * JavaScript, then parsed again by Postgres in WebAssembly (about 1 ms for a 384-float vector,
 * and the largest single cost of writing lineage rows with their envelopes). An
 * ArrayParameter goes to PGlite in Postgres's binary array format instead (what `array_send`
 * writes and `array_recv` reads: bytes copied, not parsed). node-postgres sends text
 * parameters only, so there it becomes an array literal through its `toPostgres` hook.
 */

type ElementKind = 'real' | 'uuid' | 'text' | 'bytea';

/** Element type OIDs of the binary format. */
const ELEMENT_OID: Record<ElementKind, number> = { real: 700, uuid: 2950, text: 25, bytea: 17 };

export class ArrayParameter {
  constructor(
    readonly kind: ElementKind,
    readonly values: ArrayLike<number> | ReadonlyArray<string | Uint8Array | null>,
  ) {}

  /** node-postgres: the text form, an array literal. */
  toPostgres(): string {
    return `{${Array.from(this.values as ArrayLike<unknown>, (value) => literalElement(this.kind, value)).join(',')}}`;
  }

  /**
   * The binary form: a 20-byte header (one dimension, has-nulls flag, element type OID,
   * length, lower bound 1), then each element as its byte length (-1 for null) and its bytes.
   */
  toBinary(): Uint8Array {
    const count = this.values.length;
    const elements: Array<Uint8Array | null> = new Array(count);
    let size = 20;
    let hasNulls = 0;
    for (let index = 0; index < count; index++) {
      const element = binaryElement(this.kind, this.values[index] as never);
      elements[index] = element;
      if (element === null) hasNulls = 1;
      size += 4 + (element?.byteLength ?? 0);
    }
    const bytes = new Uint8Array(size);
    const view = new DataView(bytes.buffer);
    view.setInt32(0, 1);
    view.setInt32(4, hasNulls);
    view.setInt32(8, ELEMENT_OID[this.kind]);
    view.setInt32(12, count);
    view.setInt32(16, 1);
    let offset = 20;
    for (const element of elements) {
      if (element === null) {
        view.setInt32(offset, -1);
        offset += 4;
        continue;
      }
      view.setInt32(offset, element.byteLength);
      bytes.set(element, offset + 4);
      offset += 4 + element.byteLength;
    }
    return bytes;
  }
}

/** A `real[]` parameter (embedding vectors). */
export const realArray = (values: Float32Array | readonly number[]) => new ArrayParameter('real', values);
/** A `uuid[]` parameter; null elements allowed. */
export const uuidArray = (values: ReadonlyArray<string | null>) => new ArrayParameter('uuid', values);
/** A `text[]` parameter; null elements allowed. */
export const textArray = (values: ReadonlyArray<string | null>) => new ArrayParameter('text', values);
/** A `bytea[]` parameter. */
export const byteaArray = (values: ReadonlyArray<Uint8Array | null>) => new ArrayParameter('bytea', values);

const textEncoder = new TextEncoder();

function binaryElement(kind: ElementKind, value: number | string | Uint8Array | null): Uint8Array | null {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'real': {
      const bytes = new Uint8Array(4);
      new DataView(bytes.buffer).setFloat32(0, value as number);
      return bytes;
    }
    case 'uuid':
      return uuidBytes(value as string);
    case 'text':
      return textEncoder.encode(value as string);
    case 'bytea':
      return value as Uint8Array;
  }
}

function literalElement(kind: ElementKind, value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  switch (kind) {
    case 'real':
      // String(-0) is "0": spelled out so both forms carry the same values.
      return Object.is(value, -0) ? '-0' : String(value);
    case 'uuid':
      return value as string;
    case 'text':
      return `"${(value as string).replace(/[\\"]/g, '\\$&')}"`;
    case 'bytea':
      // "\\x<hex>": the element's backslash is escaped inside the quoted array element.
      return `"\\\\x${Buffer.from(value as Uint8Array).toString('hex')}"`;
  }
  return String(value);
}

/** The 16 bytes of a UUID in its canonical text form (hyphens optional). */
function uuidBytes(text: string): Uint8Array {
  const hex = text.length === 36 ? text.replaceAll('-', '') : text;
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new TypeError(`not a UUID: ${text}`);
  return Buffer.from(hex, 'hex');
}

/** What the PGlite driver sends for a parameter: the binary form of an ArrayParameter, else the value. */
export function toPgliteParameter(value: unknown): unknown {
  return value instanceof ArrayParameter ? value.toBinary() : value;
}
