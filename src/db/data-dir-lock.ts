/**
 * One process per data dir. The embedded database (PGlite in `<data dir>/pgdata`) is a single
 * Postgres backend with no locking of its own: a second process on the same files either
 * aborts or, worse, runs beside the first and loses one side's writes at the next restart.
 * `lockDataDir` is taken before anything in the data dir is opened, and a second taker fails
 * at once with a `DataDirInUseError` naming the dir, the holder's pid and its start time.
 *
 * The lock is a file `weir.lock.<generation>` in the data dir holding the owner's pid, host,
 * boot id, process start (from /proc/<pid>/stat, so a recycled pid is told apart) and start
 * time. The newest generation is the lock; each file appears whole (written aside, then
 * hard-linked into place). A holder that died (kill -9, power loss) leaves its file behind;
 * it is stale when its process is gone, is another process under the same pid, is from an
 * earlier boot, or was released. A stale lock is taken over by creating the NEXT generation
 * with link(), which like O_EXCL fails if the name exists: two starters taking over the same
 * stale lock race on one file name and exactly one of them creates it. Nothing ever deletes
 * or overwrites the file of a possibly live holder. After creating its file a taker lists the
 * directory again and backs off if a newer generation exists (it had read an old listing).
 * A released lock is marked, not deleted, so no generation is ever created twice.
 * docs/architecture.md ("One server per data dir") says why this is not proper-lockfile.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { link, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';

const LOCK_FILE_PREFIX = 'weir.lock.';
/** Rounds of list, judge, create; each lost round means another starter moved first. */
const MAX_ATTEMPTS = 20;

/** What a lock file holds. */
export interface LockRecord {
  pid: number;
  hostname: string;
  /** /proc/sys/kernel/random/boot_id: a lock from before a reboot is stale. Absent off Linux. */
  boot_id?: string | undefined;
  /** Field 22 of /proc/<pid>/stat (clock ticks after boot): tells a recycled pid apart. */
  process_start?: string | undefined;
  /** When the lock was taken (ISO 8601), for the message a second server prints. */
  started_at: string;
  /** Set by a clean release: the next starter takes over without looking at the pid. */
  released?: boolean | undefined;
}

export interface DataDirLock {
  /** The lock file this process holds. */
  readonly file: string;
  /** Marks the lock released; idempotent. */
  release(): Promise<void>;
}

/** A second process asked for a data dir another live process holds. */
export class DataDirInUseError extends Error {
  override name = 'DataDirInUseError';
  constructor(
    readonly dataDir: string,
    readonly holder: LockRecord,
    readonly lockFile: string,
  ) {
    const elsewhere = holder.hostname !== hostname();
    super(
      elsewhere
        ? `data dir ${dataDir} is in use by pid ${holder.pid} on host ${holder.hostname} (started at ${holder.started_at}); ` +
            `if no Weir runs there any more, delete ${lockFile}`
        : `data dir ${dataDir} is in use by pid ${holder.pid} (started at ${holder.started_at})`,
    );
  }
}

/** Lock files this process holds: a lock naming our own pid is ours only if it is in here. */
const heldFiles = new Set<string>();

/**
 * Takes the data dir's lock or throws DataDirInUseError. Creates the dir if missing. The lock
 * is released by `release()` and, failing that, when the process exits normally.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const directory = path.resolve(dataDir);
  await mkdir(directory, { recursive: true });
  const own = ownRecord();
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const newest = (await listGenerations(directory)).at(-1);
    if (newest !== undefined) {
      const newestFile = lockFile(directory, newest);
      const holder = await readRecord(newestFile);
      if (holder === 'missing') continue; // cleared by a new holder meanwhile: look again
      if (holder !== 'unreadable' && isHeld(holder, newestFile)) {
        throw new DataDirInUseError(directory, holder, newestFile);
      }
    }
    const generation = (newest ?? 0) + 1;
    const file = lockFile(directory, generation);
    if (!(await createExclusively(file, own))) continue; // another starter took this generation
    heldFiles.add(file);
    const generations = await listGenerations(directory);
    if (generations.at(-1) !== generation) {
      // A newer generation exists: our listing was old and someone else holds the lock now.
      heldFiles.delete(file);
      await rm(file, { force: true });
      continue;
    }
    for (const older of generations) {
      if (older < generation) await rm(lockFile(directory, older), { force: true });
    }
    return holdLock(file, own);
  }
  throw new Error(
    `could not lock data dir ${directory}: it changed hands ${MAX_ATTEMPTS} times while trying`,
  );
}

/**
 * Whether the process a lock record names still holds it. Another host's process cannot be
 * seen from here, so its lock counts as held (the message says how to clear it).
 */
function isHeld(record: LockRecord, file: string): boolean {
  if (record.released === true) return false;
  if (record.hostname !== hostname()) return true;
  const bootId = currentBootId();
  if (record.boot_id && bootId && record.boot_id !== bootId) return false;
  // Our own pid: ours, or a previous process that had the same pid (pid 1 in a container).
  if (record.pid === process.pid) return heldFiles.has(file);
  if (!isProcessAlive(record.pid)) return false;
  const start = processStart(record.pid);
  return !(record.process_start !== undefined && start !== undefined && start !== record.process_start);
}

function holdLock(file: string, own: LockRecord): DataDirLock {
  let released = false;
  // A normal exit (process.exit, an uncaught error) releases; kill -9 leaves a stale lock.
  const releaseOnExit = () => {
    if (released) return;
    released = true;
    heldFiles.delete(file);
    try {
      const temporary = temporaryName(file);
      writeFileSync(temporary, JSON.stringify({ ...own, released: true }));
      renameSync(temporary, file);
    } catch {
      // Exiting anyway: the pid check makes the lock stale once this process is gone.
    }
  };
  process.once('exit', releaseOnExit);
  return {
    file,
    async release() {
      if (released) return;
      released = true;
      process.removeListener('exit', releaseOnExit);
      heldFiles.delete(file);
      // Replaced whole (rename), so a reader never sees half a record. Only the holder
      // writes its own generation's file, and it is never deleted while it is the newest.
      const temporary = temporaryName(file);
      await writeFile(temporary, JSON.stringify({ ...own, released: true }));
      await rename(temporary, file);
    },
  };
}

function ownRecord(): LockRecord {
  return {
    pid: process.pid,
    hostname: hostname(),
    boot_id: currentBootId(),
    process_start: processStart(process.pid),
    started_at: new Date().toISOString(),
  };
}

function lockFile(directory: string, generation: number): string {
  return path.join(directory, `${LOCK_FILE_PREFIX}${generation}`);
}

function temporaryName(file: string): string {
  return `${file}.${randomBytes(6).toString('hex')}.tmp`;
}

/** The generations of the lock files in `directory`, ascending. */
async function listGenerations(directory: string): Promise<number[]> {
  const generations: number[] = [];
  for (const name of await readdir(directory)) {
    const suffix = name.slice(LOCK_FILE_PREFIX.length);
    if (name.startsWith(LOCK_FILE_PREFIX) && /^[1-9][0-9]{0,14}$/.test(suffix)) {
      generations.push(Number(suffix));
    }
  }
  return generations.sort((left, right) => left - right);
}

/**
 * Creates `file` with the record only if no such file exists. The record is written to a
 * temporary file first and hard-linked into place (link fails with EEXIST, like O_EXCL), so
 * the lock file appears whole: a reader never sees an empty one and takes it for stale.
 */
async function createExclusively(file: string, record: LockRecord): Promise<boolean> {
  const temporary = temporaryName(file);
  await writeFile(temporary, JSON.stringify(record), { flag: 'wx' });
  try {
    await link(temporary, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await rm(temporary, { force: true });
  }
}

/**
 * The record in `file`; 'unreadable' for one that is empty or not a record. Lock files appear
 * whole (createExclusively), so that is one cut short by a power loss: stale.
 */
async function readRecord(file: string): Promise<LockRecord | 'missing' | 'unreadable'> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
  try {
    const record = JSON.parse(text) as Partial<LockRecord> | null;
    if (typeof record?.pid !== 'number' || typeof record.hostname !== 'string') return 'unreadable';
    return { ...record, started_at: String(record.started_at) } as LockRecord;
  } catch {
    return 'unreadable';
  }
}

/** kill(pid, 0): ESRCH = gone; EPERM = alive under another user. A zombie counts as gone. */
function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const state = procStatFields(pid)?.[0];
  return state !== 'Z' && state !== 'X';
}

/** The start time of `pid` in clock ticks after boot (Linux), undefined where unknown. */
export function processStart(pid: number): string | undefined {
  return procStatFields(pid)?.[19];
}

/**
 * The fields of /proc/<pid>/stat after the command name (field 3, the state, first). The
 * name is in parentheses and may hold spaces and parentheses itself, so split after the last.
 */
function procStatFields(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text
      .slice(text.lastIndexOf(')') + 2)
      .trim()
      .split(' ');
  } catch {
    return undefined;
  }
}

function currentBootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
