import { afterEach, describe, expect, it, vi } from 'vitest';
import { type CollectionReport, startIdleCollection } from './idle-collection.js';

const MB = 2 ** 20;

describe('startIdleCollection', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A heap and event loop the test sets window by window. */
  function fake() {
    const state = { busy: 0, heap: 100 * MB, collected: 0, heapAfterCollect: 60 * MB };
    return {
      state,
      busyShare: () => state.busy,
      heapBytes: () => state.heap,
      collect: () => {
        state.collected++;
        state.heap = state.heapAfterCollect;
      },
    };
  }

  it('collects once when a quiet window follows growth, not while busy, and not again while idle', () => {
    vi.useFakeTimers();
    const heap = fake();
    heap.state.heap = 50 * MB;
    const reports: CollectionReport[] = [];
    const idle = startIdleCollection({
      windowMs: 1000,
      minGrowthBytes: 16 * MB,
      ...heap,
      onCollect: (report) => reports.push(report),
    });
    // Busy windows: the heap grows, nothing is collected.
    heap.state.busy = 0.6;
    heap.state.heap = 105 * MB;
    vi.advanceTimersByTime(3000);
    expect(heap.state.collected).toBe(0);
    // The first quiet window collects.
    heap.state.busy = 0.01;
    vi.advanceTimersByTime(1000);
    expect(heap.state.collected).toBe(1);
    expect(reports).toEqual([
      { heapBytesBefore: 105 * MB, heapBytesAfter: 60 * MB, durationMs: expect.any(Number) },
    ]);
    // Idle polling grows the heap a little: no collection every window.
    heap.state.heap = 70 * MB;
    vi.advanceTimersByTime(10_000);
    expect(heap.state.collected).toBe(1);
    // Another burst, then quiet: one more.
    heap.state.heap = 90 * MB;
    vi.advanceTimersByTime(1000);
    expect(heap.state.collected).toBe(2);
    expect(idle.collections).toBe(2);
    idle.stop();
  });

  it('collects once more at the next quiet window when a collection left the heap high, and stops once it is near the floor', () => {
    vi.useFakeTimers();
    const heap = fake();
    heap.state.heap = 50 * MB;
    const idle = startIdleCollection({ windowMs: 1000, minGrowthBytes: 16 * MB, ...heap });
    heap.state.heap = 108 * MB;
    heap.state.heapAfterCollect = 93 * MB; // still held by work the event loop awaits
    vi.advanceTimersByTime(1000);
    expect(heap.state.collected).toBe(1);
    heap.state.heapAfterCollect = 60 * MB; // that work ended: its objects are garbage
    vi.advanceTimersByTime(1000);
    expect(heap.state.collected).toBe(2);
    expect(heap.state.heap).toBe(60 * MB);
    vi.advanceTimersByTime(10_000);
    expect(heap.state.collected).toBe(2);
    // The next burst ends near the new floor (60 MB): one collection, no follow-up.
    heap.state.heap = 100 * MB;
    heap.state.heapAfterCollect = 62 * MB;
    vi.advanceTimersByTime(5000);
    expect(heap.state.collected).toBe(3);
    idle.stop();
  });

  it('follows up 1, 2, 4 and 8 quiet windows apart while the heap stays high, then takes it as settled', () => {
    vi.useFakeTimers();
    const heap = fake();
    heap.state.heap = 40 * MB;
    const idle = startIdleCollection({ windowMs: 1000, minGrowthBytes: 16 * MB, ...heap });
    heap.state.heap = 120 * MB;
    heap.state.heapAfterCollect = 90 * MB; // live for as long as this test runs
    const at: number[] = [];
    for (let window = 1; window <= 40; window++) {
      const before = heap.state.collected;
      vi.advanceTimersByTime(1000);
      if (heap.state.collected > before) at.push(window);
    }
    expect(at).toEqual([1, 2, 4, 8, 16]);
    // Settled at 90 MB: growth from there starts a burst anew.
    heap.state.heap = 100 * MB;
    vi.advanceTimersByTime(5000);
    expect(heap.state.collected).toBe(5);
    idle.stop();
  });

  it('counts growth from the lowest heap seen: a heap V8 shrank itself is not growth', () => {
    vi.useFakeTimers();
    const heap = fake();
    const idle = startIdleCollection({ windowMs: 1000, minGrowthBytes: 16 * MB, ...heap });
    heap.state.heap = 40 * MB;
    vi.advanceTimersByTime(1000);
    heap.state.heap = 55 * MB; // 45 below the start, 15 above the lowest
    vi.advanceTimersByTime(1000);
    expect(heap.state.collected).toBe(0);
    heap.state.heap = 57 * MB;
    vi.advanceTimersByTime(1000);
    expect(heap.state.collected).toBe(1);
    idle.stop();
  });

  it('never collects with a window of 0, nor after stop', () => {
    vi.useFakeTimers();
    const never = fake();
    startIdleCollection({ windowMs: 0, minGrowthBytes: 0, ...never });
    never.state.heap = 500 * MB;
    vi.advanceTimersByTime(60_000);
    expect(never.state.collected).toBe(0);
    const stopped = fake();
    startIdleCollection({ windowMs: 1000, minGrowthBytes: 0, ...stopped }).stop();
    stopped.state.heap = 500 * MB;
    vi.advanceTimersByTime(60_000);
    expect(stopped.state.collected).toBe(0);
  });

  it("runs V8's own collection without --expose-gc, and the garbage goes", async () => {
    const idle = startIdleCollection({ windowMs: 50, minGrowthBytes: 0, busyShare: () => 0 });
    let garbage: number[][] | undefined = Array.from({ length: 200_000 }, (_, index) => [index, index]);
    const weak = new WeakRef(garbage);
    garbage = undefined;
    await vi.waitFor(() => expect(idle.collections).toBeGreaterThan(0), { timeout: 5000 });
    expect(weak.deref()).toBeUndefined();
    idle.stop();
  });
});
