/**
 * Filesystem object store: objects are files under `<root>`, each with its sidecar file
 * `<key>.meta.json` beside it. Writes go to a temporary file first and are renamed into place,
 * so a reader never sees half an object and a crash leaves no torn file under a real key.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  close as closeCallback,
  constants,
  open as openCallback,
  readFile as readFileCallback,
  realpathSync,
  rename as renameCallback,
  renameSync,
  rmSync,
  writeFile as writeFileCallback,
  writeFileSync,
} from 'node:fs';
import { lstat, mkdir, open, readdir, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { AppError } from '../errors.js';
import { assertValidKey, assertValidPrefix, isSidecarKey, quoteKey } from './keys.js';
import type {
  ByteRange,
  ListOptions,
  ListResult,
  ObjectInfo,
  ObjectStore,
  PutOptions,
} from './object-store.js';

const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

export function createFilesystemObjectStore(root: string, clock: () => Date = () => new Date()): ObjectStore {
  const base = path.resolve(root);
  const isConfined = confinementIn(base);
  /**
   * Folders this store made or found: a put into one skips `mkdir` (ingestion writes thousands
   * of vectors into one folder, and a recursive mkdir per put was a tenth of the store's cost).
   * A folder removed since (a delete empties it, or a hand) makes the write fail with ENOENT,
   * and the put then makes it again.
   */
  const folders = new Set<string>();
  async function writeInto(folder: string, key: string, write: () => Promise<void>): Promise<void> {
    if (!folders.has(folder)) await makeFolder(folder, key, isConfined);
    folders.add(folder);
    try {
      await write();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      folders.delete(folder);
      await makeFolder(folder, key, isConfined);
      folders.add(folder);
      await write();
    }
  }

  return withUnavailableErrors({
    kind: 'filesystem',
    location: path.resolve(root),

    async put(key: string, body: Uint8Array | string, options: PutOptions = {}): Promise<ObjectInfo> {
      assertValidKey(key);
      const file = fileFor(base, key);
      const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
      const info: ObjectInfo = {
        key,
        size: bytes.byteLength,
        content_type: options.contentType ?? DEFAULT_CONTENT_TYPE,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        created_at: clock().toISOString(),
        metadata: options.metadata ?? {},
      };
      try {
        const folder = path.dirname(file);
        await writeInto(folder, key, async () => {
          // Every put, made folder or not: a symlink put in the tree since must not take the write out.
          assertConfined(folder, key, isConfined);
          const files: Array<[string, Uint8Array | string]> = [
            [file, bytes],
            [`${file}.meta.json`, JSON.stringify(info)],
          ];
          if (bytes.byteLength <= SYNC_PUT_BYTES) return putSync(files);
          // Both temporary files at once (each write is three thread-pool round trips), then
          // the renames in order: the object before its sidecar, as when written one by one.
          const [object, sidecar] = await writeTemporaries(files);
          await renameInto(object as string, file);
          await renameInto(sidecar as string, `${file}.meta.json`);
        });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // A name clash below a sound root is the key's fault; a root that is no folder is the store's.
        const rootIsFolder = await stat(base).then(
          (found) => found.isDirectory(),
          () => false,
        );
        if (rootIsFolder && (code === 'ENOTDIR' || code === 'EISDIR' || code === 'EEXIST')) {
          throw new AppError(
            'storage_key_invalid',
            `invalid storage key ${quoteKey(key)}: a folder and an object cannot share a name`,
            { cause: error },
          );
        }
        throw error;
      }
      return info;
    },

    async get(key: string): Promise<Buffer> {
      assertValidKey(key);
      const info = await readSidecar(base, key, isConfined);
      if (!info) throw objectNotFound(key);
      return readWithoutLinks(fileFor(base, key)).catch((error: NodeJS.ErrnoException) => {
        // Replaced by a link since readSidecar looked at it.
        if (error.code === 'ELOOP') throw objectNotFound(key);
        throw error;
      });
    },

    async stat(key: string): Promise<ObjectInfo | undefined> {
      assertValidKey(key);
      return readSidecar(base, key, isConfined);
    },

    async list(options: ListOptions = {}): Promise<ListResult> {
      const prefix = options.prefix ?? '';
      assertValidPrefix(prefix);
      // Walk from the deepest folder that every matching key must sit in.
      const folder = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
      const keys = (await walk(base, folder))
        .filter((key) => key.startsWith(prefix) && !isSidecarKey(key) && !key.endsWith('.tmp'))
        .sort();
      return listPage(keys, prefix, options, (key) => readSidecar(base, key, isConfined));
    },

    async stream(key: string, range?: ByteRange): Promise<Readable> {
      assertValidKey(key);
      const info = await readSidecar(base, key, isConfined);
      if (!info) throw objectNotFound(key);
      const handle = await open(fileFor(base, key), constants.O_RDONLY | constants.O_NOFOLLOW).catch(
        (error: NodeJS.ErrnoException) => {
          if (error.code === 'ELOOP') throw objectNotFound(key);
          throw error;
        },
      );
      // The stream closes the handle when it ends or is destroyed.
      return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
    },

    async delete(key: string): Promise<boolean> {
      assertValidKey(key);
      const file = fileFor(base, key);
      const existed = (await readSidecar(base, key, isConfined)) !== undefined;
      await rm(file, { force: true });
      await rm(`${file}.meta.json`, { force: true });
      await removeEmptyParents(path.dirname(file), base);
      return existed;
    },

    async check(): Promise<void> {
      await mkdir(base, { recursive: true });
      const probe = path.join(base, `.health-${randomBytes(4).toString('hex')}`);
      await writeFile(probe, 'ok');
      await rm(probe, { force: true });
    },
  });
}

/**
 * One page of a listing: `keys` sorted, those after `startAfter`, with keys past a `delimiter`
 * rolled up into common prefixes, at most `limit` entries in all (S3's ListObjectsV2 rules).
 */
async function listPage(
  keys: readonly string[],
  prefix: string,
  options: ListOptions,
  readInfo: (key: string) => Promise<ObjectInfo | undefined>,
): Promise<ListResult> {
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const objects: ObjectInfo[] = [];
  const commonPrefixes: string[] = [];
  let truncated = false;
  for (const key of keys) {
    const delimiter = options.delimiter;
    const cut = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
    const entry = delimiter && cut >= 0 ? key.slice(0, cut + delimiter.length) : key;
    if (options.startAfter !== undefined && entry <= options.startAfter) continue;
    if (entry !== key) {
      if (commonPrefixes.at(-1) === entry) continue;
      if (objects.length + commonPrefixes.length >= limit) {
        truncated = true;
        break;
      }
      commonPrefixes.push(entry);
      continue;
    }
    if (objects.length + commonPrefixes.length >= limit) {
      truncated = true;
      break;
    }
    const info = await readInfo(key);
    if (info) objects.push(info);
  }
  return { objects, commonPrefixes, truncated };
}

/**
 * A failure of the file system itself (no space, read-only, I/O error, the root replaced by a
 * file...) is the store being down: 503 storage_unavailable, not a 500. Errors the store
 * raises on purpose (AppError: not found, invalid key) pass as they are.
 */
function withUnavailableErrors(store: ObjectStore): ObjectStore {
  const guard =
    <A extends unknown[], R>(what: string, operation: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await operation(...args);
      } catch (error) {
        if (error instanceof AppError || typeof (error as NodeJS.ErrnoException).code !== 'string')
          throw error;
        throw new AppError(
          'storage_unavailable',
          // The code only (ENOSPC, EACCES): the message names paths on the server, which the
          // caller has no business seeing; the log has the whole error.
          `object storage (filesystem) could not ${what}: ${(error as NodeJS.ErrnoException).code}`,
          { cause: error },
        );
      }
    };
  return {
    ...store,
    put: guard('write an object', store.put),
    get: guard('read an object', store.get),
    stat: guard('read an object', store.stat),
    list: guard('list objects', store.list),
    stream: guard('read an object', store.stream),
    delete: guard('delete an object', store.delete),
    check: guard('write a probe file', store.check),
  };
}

function objectNotFound(key: string): AppError {
  return new AppError('object_not_found', `object ${quoteKey(key)} not found`);
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Every file key under `folder` (relative to `base`), recursively; symlinks are not followed. */
async function walk(base: string, folder: string): Promise<string[]> {
  const keys: string[] = [];
  const pending = [folder];
  while (pending.length > 0) {
    const current = pending.pop() as string;
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(path.join(base, ...current.split('/').filter(Boolean)), {
        withFileTypes: true,
      });
    } catch (error) {
      if (isMissing(error)) continue;
      throw error;
    }
    for (const entry of entries) {
      const key = current ? `${current}/${entry.name}` : entry.name;
      if (entry.isDirectory()) pending.push(key);
      else if (entry.isFile() && !entry.name.startsWith('.health-')) keys.push(key);
    }
  }
  return keys;
}

/** Delete emptied folders up to the root so listings do not show dead common prefixes. */
async function removeEmptyParents(folder: string, base: string): Promise<void> {
  let current = folder;
  while (current.startsWith(base + path.sep)) {
    try {
      await rmdir(current);
    } catch {
      return;
    }
    current = path.dirname(current);
  }
}

/** The file for a validated key; refuses anything that would resolve outside the root. */
function fileFor(base: string, key: string): string {
  const file = path.resolve(base, ...key.split('/'));
  if (!file.startsWith(base + path.sep)) {
    throw new AppError('storage_key_invalid', `invalid storage key ${quoteKey(key)}: escapes the store`);
  }
  return file;
}

/** Makes `folder` (and its parents), refusing one that resolves outside the root. */
async function makeFolder(folder: string, key: string, isConfined: ConfinementCheck): Promise<void> {
  await mkdir(folder, { recursive: true });
  assertConfined(folder, key, isConfined);
}

function assertConfined(folder: string, key: string, isConfined: ConfinementCheck): void {
  if (!isConfined(folder)) {
    throw new AppError('storage_key_invalid', `invalid storage key ${quoteKey(key)}: escapes the store`);
  }
}

/** True when a path's real location (symlinks resolved) is inside the store's root. */
type ConfinementCheck = (file: string) => boolean;

/**
 * The confinement check of one store: a symlink placed in the tree by hand, before or after
 * this store wrote there, must not let a key read or write outside the root, so the path asked
 * about is resolved on every put and get. Synchronously: resolving a path is the kernel's walk
 * of its cached names (a readlink per component, microseconds), where fs/promises' realpath
 * was a round trip to libuv's thread pool, with its futexes and wake-ups, on every put and get
 * (bench:ingest: 2.7 s of the run's CPU for a put's two). The root's real path is resolved
 * once, kept once found: a root replaced since by a link elsewhere confines nothing there.
 */
function confinementIn(base: string): ConfinementCheck {
  let realBase: string | undefined;
  function resolvedBase(): string {
    if (realBase !== undefined) return realBase;
    try {
      realBase = realpathSync.native(base);
      return realBase;
    } catch {
      // No root yet (a put makes it): the path as given, and resolved again next time.
      return base;
    }
  }
  function isConfined(file: string): boolean {
    const root = resolvedBase();
    let real: string;
    try {
      real = realpathSync.native(file);
    } catch (error) {
      if (!isMissing(error)) throw error;
      // Not there yet: the folder it will be written into must be confined.
      const parent = path.dirname(file);
      if (parent === file || parent === base) return true;
      return isConfined(parent);
    }
    return real === root || real.startsWith(root + path.sep);
  }
  return isConfined;
}

async function readSidecar(
  base: string,
  key: string,
  isConfined: ConfinementCheck,
): Promise<ObjectInfo | undefined> {
  const file = fileFor(base, key);
  if (!isConfined(file)) return undefined;
  let stats: Awaited<ReturnType<typeof lstat>>;
  try {
    stats = await lstat(file);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  if (!stats.isFile()) return undefined;
  try {
    const sidecar = JSON.parse((await readWithoutLinks(`${file}.meta.json`)).toString('utf8')) as ObjectInfo;
    return { ...sidecar, key };
  } catch {
    // Sidecar missing or unreadable (a crash between the two renames, or a file put there by
    // hand): describe the object from the filesystem rather than hide it.
    return {
      key,
      size: stats.size,
      content_type: DEFAULT_CONTENT_TYPE,
      sha256: createHash('sha256')
        .update(await readWithoutLinks(file))
        .digest('hex'),
      created_at: stats.mtime.toISOString(),
      metadata: {},
    };
  }
}

/**
 * The file's bytes, refusing to follow a symlink in its last component (ELOOP): a link put
 * in the store by hand must not serve a file from elsewhere. Links in the folders above are
 * caught by isConfined.
 */
function readWithoutLinks(file: string): Promise<Buffer> {
  // Through the callback API, as writeTemporary: fs/promises' FileHandle costs a promise per
  // open, read and close, and a get reads two files.
  return new Promise((resolve, reject) => {
    openCallback(file, constants.O_RDONLY | constants.O_NOFOLLOW, (opened, fd) => {
      if (opened) return reject(opened);
      readFileCallback(fd, (failed, bytes) => {
        closeCallback(fd, (closed) => {
          if (failed || closed) reject(failed ?? closed);
          else resolve(bytes);
        });
      });
    });
  });
}

/**
 * Temporary names: this process's random prefix and a counter, unique among the processes
 * sharing a store without drawing random bytes for every file.
 */
const temporaryPrefix = randomBytes(6).toString('hex');
let temporaryCount = 0;

function temporaryFor(file: string): string {
  temporaryCount++;
  return `${file}.${temporaryPrefix}${temporaryCount.toString(36)}.tmp`;
}

/**
 * Through the callback API: fs/promises' writeFile goes through a FileHandle with a promise
 * per open, write and close, and cost a third more user CPU per put in bench/store-puts.ts
 * (docs/benchmarks.md, Ingestion). Resolves with the temporary file's name.
 */
function writeTemporary(file: string, body: Uint8Array | string): Promise<string> {
  const temporary = temporaryFor(file);
  return new Promise((resolve, reject) => {
    writeFileCallback(temporary, body, (error) => (error ? reject(error) : resolve(temporary)));
  });
}

/** writeTemporary for each file at once; when one fails, the others' temporaries are removed. */
async function writeTemporaries(files: Array<[string, Uint8Array | string]>): Promise<string[]> {
  const written = await Promise.allSettled(files.map(([file, body]) => writeTemporary(file, body)));
  const failed = written.find((result) => result.status === 'rejected');
  if (!failed) return written.map((result) => (result as PromiseFulfilledResult<string>).value);
  await Promise.all(
    written.map((result) => (result.status === 'fulfilled' ? rm(result.value, { force: true }) : undefined)),
  );
  throw failed.reason;
}

/**
 * Objects up to this size are put synchronously (putSync). Ingestion's many small objects (a
 * vector of 1-2 kB per segment, and its sidecar) cost less CPU that way: through the thread
 * pool a put is eight round trips (open, write and close of two files, two renames), each a
 * futex wake of a pool thread and an epoll wake of this one; synchronously the same system
 * calls block this thread for about half a millisecond (bench/store-puts.ts 3000 8 1100:
 * 500-700 against 820-1000 µs of CPU a put; bench:ingest, docs/benchmarks.md "Ingestion").
 * A larger body (a page's HTML or markdown) keeps the thread pool: copying it would hold the
 * event loop longer.
 */
const SYNC_PUT_BYTES = 64 * 1024;

/**
 * The temporaries written and renamed into place in order (the object before its sidecar, as
 * the thread-pool path does), without leaving the thread: a failure removes the temporaries
 * not yet renamed, and is thrown (an ENOENT lets writeInto make the folder and try again).
 */
function putSync(files: ReadonlyArray<[string, Uint8Array | string]>): void {
  const temporaries: string[] = [];
  try {
    for (const [file, body] of files) {
      const temporary = temporaryFor(file);
      writeFileSync(temporary, body);
      temporaries.push(temporary);
    }
    for (const [index, [file]] of files.entries()) {
      renameSync(temporaries[index] as string, file);
      temporaries[index] = '';
    }
  } catch (error) {
    for (const temporary of temporaries) if (temporary) rmSync(temporary, { force: true });
    throw error;
  }
}

/** Renames a temporary into place; a failed rename removes the temporary. */
function renameInto(temporary: string, file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    renameCallback(temporary, file, (error) => {
      if (!error) return resolve();
      rm(temporary, { force: true }).then(
        () => reject(error),
        () => reject(error),
      );
    });
  });
}
