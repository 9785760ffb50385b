import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { skipBecause } from '../../test/helpers/skip.js';
import { DataDirInUseError, type LockRecord, lockDataDir, processStart } from './data-dir-lock.js';
import { openDatabase } from './database.js';

const notLinux = existsSync('/proc/self/stat')
  ? undefined
  : 'no /proc (process start times and boot ids are Linux-only)';

let dataDir: string;
const children: ChildProcess[] = [];
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'weir-lock-'));
});
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

/** A lock file as a process that is not this one left it. */
async function writeLock(generation: number, record: Partial<LockRecord>): Promise<void> {
  const full = { hostname: hostname(), started_at: '2020-01-01T00:00:00.000Z', ...record };
  await writeFile(path.join(dataDir, `weir.lock.${generation}`), JSON.stringify(full));
}

async function lockFiles(): Promise<string[]> {
  return (await readdir(dataDir)).filter((name) => name.startsWith('weir.lock.')).sort();
}

async function recordIn(name: string): Promise<LockRecord> {
  return JSON.parse(await readFile(path.join(dataDir, name), 'utf8')) as LockRecord;
}

/** A live process other than this one (killed after the test). */
function sleeper(): ChildProcess {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  children.push(child);
  return child;
}

/** The pid of a process that has exited (and been reaped). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid as number;
}

async function expectInUse(promise: Promise<unknown>, pid: number, startedAt: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(DataDirInUseError);
  expect((error as Error).message).toBe(
    `data dir ${path.resolve(dataDir)} is in use by pid ${pid} (started at ${startedAt})`,
  );
}

describe('lockDataDir', () => {
  it('refuses a second taker while held, and lets the next in once released', async () => {
    const lock = await lockDataDir(dataDir);
    const record = await recordIn('weir.lock.1');
    expect(record).toMatchObject({ pid: process.pid, hostname: hostname() });
    await expectInUse(lockDataDir(dataDir), process.pid, record.started_at);

    await lock.release();
    expect((await recordIn('weir.lock.1')).released).toBe(true);
    const next = await lockDataDir(dataDir);
    // The next generation holds; the released one is cleared.
    expect(await lockFiles()).toEqual(['weir.lock.2']);
    await next.release();
  });

  it('takes over a lock whose process is gone (kill -9)', async () => {
    await writeLock(1, { pid: await deadPid() });
    const lock = await lockDataDir(dataDir);
    expect(await lockFiles()).toEqual(['weir.lock.2']);
    expect((await recordIn('weir.lock.2')).pid).toBe(process.pid);
    await lock.release();
  });

  it.skipIf(skipBecause(notLinux, 'the recycled pid lock test'))(
    'refuses a live holder, and takes over a recycled pid (start time differs)',
    async () => {
      const live = sleeper();
      const pid = live.pid as number;
      await new Promise((resolve) => live.once('spawn', resolve));
      const start = processStart(pid);
      expect(start).toMatch(/^\d+$/);
      await writeLock(1, { pid, process_start: start });
      await expectInUse(lockDataDir(dataDir), pid, '2020-01-01T00:00:00.000Z');

      // Same pid, but the process that took the lock started at another time: pid reuse.
      await writeLock(1, { pid, process_start: String(Number(start) - 1) });
      const lock = await lockDataDir(dataDir);
      expect(await lockFiles()).toEqual(['weir.lock.2']);
      await lock.release();
    },
  );

  it('takes over a lock that names this pid but that this process does not hold (pid 1 in a container)', async () => {
    await writeLock(1, { pid: process.pid });
    const lock = await lockDataDir(dataDir);
    expect(await lockFiles()).toEqual(['weir.lock.2']);
    await lock.release();
  });

  it.skipIf(skipBecause(notLinux, 'the reboot lock test'))(
    'takes over a lock from before a reboot',
    async () => {
      await writeLock(1, { pid: sleeper().pid as number, boot_id: 'an-earlier-boot' });
      const lock = await lockDataDir(dataDir);
      expect(await lockFiles()).toEqual(['weir.lock.2']);
      await lock.release();
    },
  );

  it('takes over an empty lock file (cut short by a power loss)', async () => {
    await writeFile(path.join(dataDir, 'weir.lock.7'), '');
    const lock = await lockDataDir(dataDir);
    expect(await lockFiles()).toEqual(['weir.lock.8']);
    await lock.release();
  });

  it("refuses another host's lock, whose process cannot be seen, and says how to clear it", async () => {
    await writeLock(1, { pid: 4242, hostname: 'elsewhere.example' });
    await expect(lockDataDir(dataDir)).rejects.toThrow(
      `data dir ${path.resolve(dataDir)} is in use by pid 4242 on host elsewhere.example (started at 2020-01-01T00:00:00.000Z); ` +
        `if no Weir runs there any more, delete ${path.join(path.resolve(dataDir), 'weir.lock.1')}`,
    );
  });

  it('lets exactly one of several takers in this process win', async () => {
    await writeLock(1, { pid: await deadPid() });
    const results = await Promise.allSettled([1, 2, 3, 4, 5].map(() => lockDataDir(dataDir)));
    const held = results.filter((result) => result.status === 'fulfilled');
    expect(held).toHaveLength(1);
    for (const result of results) {
      if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(DataDirInUseError);
    }
    await (held[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof lockDataDir>>>).value.release();
  });

  it('lets exactly one of several processes taking over the same stale lock win', async () => {
    await writeLock(1, { pid: await deadPid() });
    const contenders = [1, 2, 3, 4].map(() => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', path.resolve('test/helpers/lock-contender.ts'), dataDir],
        { stdio: ['pipe', 'pipe', 'inherit'] },
      );
      children.push(child);
      return { child, lines: createInterface({ input: child.stdout as NonNullable<typeof child.stdout> }) };
    });
    const nextLine = (lines: (typeof contenders)[number]['lines']) =>
      new Promise<string>((resolve) => lines.once('line', resolve));
    await Promise.all(contenders.map(async ({ lines }) => expect(await nextLine(lines)).toBe('ready')));
    const outcomes = await Promise.all(
      contenders.map(({ child, lines }) => {
        const outcome = nextLine(lines);
        child.stdin?.write('go\n');
        return outcome.then((line) => JSON.parse(line) as { held?: true; error?: string; pid: number });
      }),
    );
    const winners = outcomes.filter((outcome) => outcome.held);
    expect(winners).toHaveLength(1);
    const winner = winners[0] as { pid: number };
    const holder = (await recordIn((await lockFiles()).at(-1) as string)) as LockRecord;
    expect(holder.pid).toBe(winner.pid);
    for (const outcome of outcomes.filter((candidate) => !candidate.held)) {
      expect(outcome.error).toBe(
        `data dir ${path.resolve(dataDir)} is in use by pid ${winner.pid} (started at ${holder.started_at})`,
      );
    }
    for (const { child } of contenders) child.stdin?.end();
    await Promise.all(contenders.map(({ child }) => new Promise((resolve) => child.once('exit', resolve))));
    // The winner's normal exit released the lock.
    expect((await recordIn((await lockFiles()).at(-1) as string)).released).toBe(true);
  }, 60_000);
});

describe('openDatabase in a data dir', () => {
  it('holds the lock from before PGlite opens until it is closed', async () => {
    const database = await openDatabase({ dataDir, pgliteThread: 'main', migrate: false });
    try {
      const holder = await recordIn('weir.lock.1');
      await expectInUse(openDatabase({ dataDir, pgliteThread: 'main' }), process.pid, holder.started_at);
    } finally {
      await database.close();
    }
    expect((await recordIn('weir.lock.1')).released).toBe(true);
    const reopened = await openDatabase({ dataDir, pgliteThread: 'main', migrate: false });
    await reopened.close();
  }, 180_000);

  it('takes no lock in memory', async () => {
    const database = await openDatabase({ pgliteThread: 'main', migrate: false });
    await database.close();
    expect(await lockFiles()).toEqual([]);
  });

  // `weir serve` passes its data dir along with DATABASE_URL: the server has its own locking.
  it.skipIf(
    skipBecause(
      process.env.DATABASE_URL ? undefined : 'DATABASE_URL is not set (CI sets it)',
      'the PostgreSQL server lock test',
    ),
  )('takes no lock on a PostgreSQL server', async () => {
    const database = await openDatabase({ url: process.env.DATABASE_URL, dataDir, migrate: false });
    await database.ping();
    await database.close();
    expect(await lockFiles()).toEqual([]);
  });
});
