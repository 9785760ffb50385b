import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createDeadlineList, deadlinesOf } from './deadlines.js';

describe('deadline list', () => {
  it('runs each deadline once its time has passed, in the order set, and not a cancelled one', async () => {
    const list = createDeadlineList(40);
    const fired: Array<[string, number]> = [];
    const setAt = new Map<string, number>();
    const set = (name: string) => {
      setAt.set(name, performance.now());
      return list.set(() => fired.push([name, performance.now()]));
    };
    set('a');
    const b = set('b');
    await sleep(15);
    set('c');
    b.cancel();
    // Bounds that hold however late the timers run on a loaded machine: never early, in order.
    for (let waited = 0; fired.length < 2 && waited < 5000; waited += 10) await sleep(10);
    expect(fired.map(([name]) => name)).toEqual(['a', 'c']);
    for (const [name, at] of fired) expect(at - (setAt.get(name) as number)).toBeGreaterThanOrEqual(39.5);
    await sleep(50);
    expect(fired).toHaveLength(2);
    expect(list.armed).toBe(false);
  });

  it('holds no timer once every deadline is cancelled (a process with nothing in flight can exit)', () => {
    const list = createDeadlineList(10_000);
    const deadlines = [list.set(() => {}), list.set(() => {}), list.set(() => {})];
    expect(list.armed).toBe(true);
    deadlines[0]?.cancel();
    deadlines[2]?.cancel();
    expect(list.armed).toBe(true);
    deadlines[1]?.cancel();
    expect(list.armed).toBe(false);
    // Cancelling twice changes nothing.
    deadlines[1]?.cancel();
    expect(list.armed).toBe(false);
  });

  it('goes on to the next deadline when the first was cancelled before its time', async () => {
    const list = createDeadlineList(30);
    const fired: string[] = [];
    const first = list.set(() => fired.push('first'));
    await sleep(10);
    list.set(() => fired.push('second'));
    first.cancel();
    for (let waited = 0; fired.length < 1 && waited < 5000; waited += 10) await sleep(10);
    expect(fired).toEqual(['second']);
  });

  it('shares one list per length', () => {
    expect(deadlinesOf(1234)).toBe(deadlinesOf(1234));
    expect(deadlinesOf(1234)).not.toBe(deadlinesOf(1235));
  });
});
