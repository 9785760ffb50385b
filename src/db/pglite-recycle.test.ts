import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RecycleReport, recycling, startRecyclingPgliteThread } from './pglite-recycle.js';
import { startPgliteThread } from './pglite-thread.js';

const setup = [`select set_config('weir.recycle_test', 'replayed', false)`];

async function until(condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function count(session: { query<R>(sql: string): Promise<{ rows: R[] }> }): Promise<number> {
  const { rows } = await session.query<{ n: number }>('select count(*)::int as n from items');
  return rows[0]?.n as number;
}

describe('PGlite thread recycling', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'weir-recycle-'));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('holds the statements that arrive during a recycle and answers every one on the new thread', async () => {
    const session = await startRecyclingPgliteThread(
      dataDir,
      {},
      { idleMs: 0, minGrowthBytes: 0, sessionSetup: setup },
    );
    try {
      await session.query('create table items (id int primary key, body text not null)');
      // Work that grows PGlite's memory: 20,000 rows of text, sorted once.
      await session.query(
        `insert into items select n, repeat(md5(n::text), 8) from generate_series(1, 20000) as n`,
      );
      await session.query('select body from items order by body desc limit 1');
      const before = await session.query<{ id: number; body: string }>(
        'select id, body from items where id in (1, 777, 20000) order by id',
      );

      const recycling = session.recycle();
      // Sent while the recycle runs: each is held, then answered by the new thread, in order.
      const during = Array.from({ length: 40 }, (_, index) =>
        index % 2 === 0
          ? session.query('insert into items values ($1, $2)', [20001 + index, `during ${index}`])
          : session.query<{ n: number }>('select count(*)::int as n from items'),
      );
      const report: RecycleReport = await recycling;
      const answers = await Promise.all(during);
      expect(report.held).toBe(40);
      expect(report.wasmBytesBefore).toBeGreaterThan(0);
      expect(session.recycles).toBe(1);
      // Arrival order: each count sees the inserts sent before it and none after.
      answers.forEach((answer, index) => {
        if (index % 2 === 1) expect(answer.rows).toEqual([{ n: 20000 + (index + 1) / 2 }]);
      });

      expect(await count(session)).toBe(20020);
      const after = await session.query('select id, body from items where id in (1, 777, 20000) order by id');
      expect(after.rows).toEqual(before.rows);
      const replayed = await session.query<{ value: string }>(
        `select current_setting('weir.recycle_test') as value`,
      );
      expect(replayed.rows).toEqual([{ value: 'replayed' }]);
    } finally {
      await session.close();
    }
    // What the recycled thread wrote is on disk: a plain thread on the same dir sees it.
    const reopened = await startPgliteThread(dataDir);
    try {
      expect(await count(reopened)).toBe(20020);
    } finally {
      await reopened.close();
    }
  }, 120_000);

  it('recycles by itself after a quiet window once grown, never while busy or inside a transaction', async () => {
    let rss = 1000;
    const reports: RecycleReport[] = [];
    const session = await startRecyclingPgliteThread(
      dataDir,
      {},
      {
        idleMs: 150,
        minGrowthBytes: 500,
        sessionSetup: setup,
        rss: () => rss,
        onRecycle: (report) => reports.push(report),
        // The data dir is new; judged by growth alone here (the first-start rule is the next test's).
        createdDatabase: false,
      },
    );
    try {
      await session.query('create table items (id int primary key)');
      await session.query('insert into items values (1)');
      // Quiet, but the process did not grow enough: no recycle.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(session.recycles).toBe(0);

      // Grown, but busy: one statement after another, for a window before the growth (so no
      // window that sees the growth was quiet) and four after.
      const busyFrom = Date.now();
      while (Date.now() < busyFrom + 750) {
        if (Date.now() > busyFrom + 150) rss = 2000;
        await session.query('select count(*) from items, generate_series(1, 2000)');
      }
      expect(session.recycles).toBe(0);

      await session.query('begin');
      await session.query('insert into items values (2)');
      // Grown and quiet, but a transaction is open: it must not be cut.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(session.recycles).toBe(0);
      await session.query('commit');

      await until(() => reports.length === 1);
      expect(session.recycles).toBe(1);
      expect(await count(session)).toBe(2);
      // The new thread's RSS is the new baseline: no second recycle without new growth.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(session.recycles).toBe(1);
      // The allocator gives memory back late: growth counts from the lowest quiet RSS since.
      rss = 1200;
      await new Promise((resolve) => setTimeout(resolve, 500));
      rss = 1800;
      await until(() => reports.length === 2);
      expect(await count(session)).toBe(2);
    } finally {
      await session.close();
    }
  }, 120_000);

  it('recycles a thread that created the database at its first quiet window, whatever the growth', async () => {
    const session = await startRecyclingPgliteThread(dataDir, {}, { idleMs: 150, minGrowthBytes: 2 ** 50 });
    try {
      await until(() => session.recycles === 1);
      await session.query('create table items (id int primary key)');
      // The new thread did not create the database: growth alone decides, and there is none.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(session.recycles).toBe(1);
      expect(await count(session)).toBe(0);
    } finally {
      await session.close();
    }
  }, 120_000);

  it('fails the held statements when the new thread cannot open, and opens one on the next', async () => {
    let opens = 0;
    const session = await recycling(
      async () => {
        opens++;
        if (opens === 2) throw new Error('the data dir is gone');
        return startPgliteThread(dataDir);
      },
      { idleMs: 0, minGrowthBytes: 0 },
    );
    try {
      await session.query('create table items (id int primary key)');
      await session.query('insert into items values (1)');
      const recycled = session.recycle();
      const held = session.query('select 1');
      await expect(recycled).rejects.toThrow('the data dir is gone');
      await expect(held).rejects.toThrow('the data dir is gone');
      // The next statement opens a thread again, and the data is there.
      expect(await count(session)).toBe(1);
      expect(opens).toBe(3);
    } finally {
      await session.close();
    }
  }, 120_000);
});
