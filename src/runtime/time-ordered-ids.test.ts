import { describe, expect, it } from 'vitest';
import { newTimeOrderedId } from './time-ordered-ids.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newTimeOrderedId', () => {
  it('gives distinct UUIDv7s in ascending order, across refills of the random pool', () => {
    // 5,000 ids draw about 15,000 words: several refills of the 2,048-word pool.
    const ids = Array.from({ length: 5000 }, () => newTimeOrderedId());
    for (const id of ids) expect(id).toMatch(UUID_V7);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('carries the current time in its first 48 bits', () => {
    const before = Date.now();
    const id = newTimeOrderedId();
    const after = Date.now();
    const millis = Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);
    expect(millis).toBeGreaterThanOrEqual(before);
    expect(millis).toBeLessThanOrEqual(after);
  });

  it('draws random bits that differ between ids of the same millisecond', () => {
    const ids = Array.from({ length: 200 }, () => newTimeOrderedId());
    // The last 12 hex digits (48 bits) are random in each id: no two alike.
    expect(new Set(ids.map((id) => id.slice(-12))).size).toBe(ids.length);
  });
});
