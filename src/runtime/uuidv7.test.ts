import { describe, expect, it, vi } from 'vitest';
import { uuidv7 } from './uuidv7.js';

const FORM = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const millisecondsOf = (id: string) => Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

describe('uuidv7', () => {
  it('is a version 7, variant 10 UUID carrying the current Unix milliseconds', () => {
    const before = Date.now();
    const id = uuidv7();
    const after = Date.now();
    expect(id).toMatch(FORM);
    expect(millisecondsOf(id)).toBeGreaterThanOrEqual(before);
    expect(millisecondsOf(id)).toBeLessThanOrEqual(after + 1);
  });

  it('sorts in the order made, within a millisecond and past 4,096 ids in one', () => {
    const ids = Array.from({ length: 20_000 }, () => uuidv7());
    for (const id of ids) expect(id).toMatch(FORM);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('keeps counting up when the clock goes back', () => {
    const first = uuidv7();
    const spy = vi.spyOn(Date, 'now').mockReturnValue(Date.now() - 60_000);
    try {
      const [second, third] = [uuidv7(), uuidv7()];
      expect(second > first).toBe(true);
      expect(third > second).toBe(true);
    } finally {
      spy.mockRestore();
    }
  });

  it('draws the random part afresh for every id', () => {
    const tails = new Set(Array.from({ length: 1000 }, () => uuidv7().slice(19)));
    expect(tails.size).toBe(1000);
  });
});
