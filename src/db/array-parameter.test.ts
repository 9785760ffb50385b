import { describe, expect, it } from 'vitest';
import { textArray, uuidArray } from './array-parameter.js';

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
});
