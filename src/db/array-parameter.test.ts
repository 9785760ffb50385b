import { describe, expect, it } from 'vitest';
import { movableParameterMemory, textArray, toPgliteParameter, uuidArray } from './array-parameter.js';

/** The elements of a one-dimensional binary array, as byte arrays (null for NULL). */
function elements(bytes: Uint8Array): Array<number[] | null> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.getInt32(12);
  const result: Array<number[] | null> = [];
  let offset = 20;
  for (let index = 0; index < count; index++) {
    const length = view.getInt32(offset);
    offset += 4;
    if (length < 0) {
      result.push(null);
      continue;
    }
    result.push(Array.from(bytes.subarray(offset, offset + length)));
    offset += length;
  }
  expect(offset).toBe(bytes.byteLength);
  return result;
}

describe('binary array parameters', () => {
  it('writes a UUID the same in any accepted spelling', () => {
    const expected = [
      0x01, 0x8f, 0x0c, 0x8e, 0x1b, 0x2c, 0x7d, 0x3e, 0x8f, 0x40, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc,
    ];
    const spellings = [
      '018f0c8e-1b2c-7d3e-8f40-123456789abc',
      '018F0C8E-1B2C-7D3E-8F40-123456789ABC',
      '018f0c8e1b2c7d3e8f40123456789abc',
    ];
    expect(elements(uuidArray([...spellings, null]).toBinary())).toEqual([
      expected,
      expected,
      expected,
      null,
    ]);
  });

  it('refuses what is not a UUID', () => {
    for (const text of [
      '018f0c8e-1b2c-7d3e-8f40-123456789ab', // one digit short
      '018f0c8e-1b2c-7d3e-8f40-123456789abg', // not hex
      '018f0c8e1-b2c-7d3e-8f40-123456789abc', // hyphen misplaced
      '018f0c8e-1b2c-7d3e-8f40-123456789abc ', // trailing space
    ])
      expect(() => uuidArray([text]).toBinary(), text).toThrow(/not a UUID/);
  });

  it('writes text as UTF-8 with its byte length', () => {
    const texts = ['', 'plain', 'æøå 漢字 🚀', null];
    expect(elements(textArray(texts).toBinary())).toEqual(
      texts.map((text) => (text === null ? null : Array.from(Buffer.from(text, 'utf8')))),
    );
  });

  it('moves to the PGlite thread only the binary forms it made that own their memory', () => {
    const large = toPgliteParameter(textArray(['x'.repeat(10_000)])) as Buffer;
    const small = toPgliteParameter(textArray(['x'])) as Buffer;
    const callers = Buffer.alloc(10_000);
    const parameters = [large, small, callers, 'text', 7];
    // A small Buffer is a slice of Node's shared pool: moving it would take other Buffers' memory.
    expect(small.byteLength).toBeLessThan(small.buffer.byteLength);
    expect(movableParameterMemory(parameters)).toEqual([large.buffer]);
    // Once only: a second send of the same parameters copies them.
    expect(movableParameterMemory(parameters)).toEqual([]);
  });
});
