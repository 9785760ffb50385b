/**
 * A file share on the local file system (a directory, an SMB or NFS mount): the `local`
 * provider of fileshare_enumerator and fileshare_fetcher. Pipelines name a root directory;
 * only directories under the `fileshare_roots` setting may be read, and every path is
 * resolved through symlinks and checked against the root, so `../` or a link out of the
 * share cannot reach the rest of the machine.
 */
import { lstat, open, opendir, realpath } from 'node:fs/promises';
import path from 'node:path';

export interface ShareFile {
  /** Path relative to the share root, with `/` separators. */
  path: string;
  name: string;
  size: number;
  modified_at: string;
}

export class ShareAccessError extends Error {
  override name = 'ShareAccessError';
  /** No retry reaches a path outside the share or a file that is not there. */
  readonly permanent = true;
}

/**
 * The real path of `root` when it lies inside one of `allowedRoots` (also resolved);
 * throws ShareAccessError otherwise.
 */
export async function resolveShareRoot(root: string, allowedRoots: readonly string[]): Promise<string> {
  let resolved: string;
  try {
    resolved = await realpath(path.resolve(root));
  } catch {
    throw new ShareAccessError(`share root ${root} does not exist`);
  }
  for (const allowed of allowedRoots) {
    let allowedReal: string;
    try {
      allowedReal = await realpath(path.resolve(allowed));
    } catch {
      continue;
    }
    if (isInside(resolved, allowedReal)) return resolved;
  }
  throw new ShareAccessError(
    `share root ${root} is outside the allowed roots (setting fileshare_roots / WEIR_FILESHARE_ROOTS: ${allowedRoots.join(', ') || 'none'})`,
  );
}

/**
 * Whether `root` lies under one of `allowedRoots` by its path alone (validation, before a
 * run; symlinks are resolved by resolveShareRoot when the run reads the share).
 */
export function isUnderAllowedRoots(root: string, allowedRoots: readonly string[]): boolean {
  const resolved = path.resolve(root);
  return allowedRoots.some((allowed) => isInside(resolved, path.resolve(allowed)));
}

function isInside(candidate: string, root: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

export interface ListShareOptions {
  /** Lower-case extensions with the dot (`.pdf`); empty = every file. */
  extensions: readonly string[];
  recursive: boolean;
  maxFiles: number;
  signal?: AbortSignal | undefined;
}

/** Files under `root` (already resolved), sorted by path within each directory; no symlinks followed. */
export async function* listShareFiles(root: string, options: ListShareOptions): AsyncGenerator<ShareFile> {
  let emitted = 0;
  const pending: string[] = [''];
  while (pending.length > 0) {
    const relativeDirectory = pending.shift() as string;
    const directory = await opendir(path.join(root, relativeDirectory));
    const entries: Array<{ name: string; isDirectory: boolean; isFile: boolean }> = [];
    for await (const entry of directory) {
      entries.push({ name: entry.name, isDirectory: entry.isDirectory(), isFile: entry.isFile() });
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (options.signal?.aborted) return;
      if (entry.name.startsWith('.')) continue; // hidden files and folders (.git, .DS_Store)
      const relative = relativeDirectory ? `${relativeDirectory}/${entry.name}` : entry.name;
      if (entry.isDirectory) {
        if (options.recursive) pending.push(relative);
        continue;
      }
      if (!entry.isFile) continue; // symlinks, sockets, devices
      const extension = path.extname(entry.name).toLowerCase();
      if (options.extensions.length > 0 && !options.extensions.includes(extension)) continue;
      const stats = await lstat(path.join(root, relative));
      yield { path: relative, name: entry.name, size: stats.size, modified_at: stats.mtime.toISOString() };
      if (++emitted >= options.maxFiles) return;
    }
  }
}

/**
 * The bytes of `relativePath` under `root`, refusing paths that leave the share (`..`,
 * absolute paths, symlinks pointing outside) and files larger than `maxBytes`.
 */
export async function readShareFile(root: string, relativePath: string, maxBytes: number): Promise<Buffer> {
  if (relativePath.includes('\0') || path.isAbsolute(relativePath)) {
    throw new ShareAccessError(
      `path ${JSON.stringify(relativePath)} is not a relative path inside the share`,
    );
  }
  const joined = path.resolve(root, relativePath);
  if (!isInside(joined, root)) throw new ShareAccessError(`path ${relativePath} leaves the share`);
  let real: string;
  try {
    real = await realpath(joined);
  } catch {
    throw new ShareAccessError(`file ${relativePath} does not exist`);
  }
  if (!isInside(real, root)) throw new ShareAccessError(`path ${relativePath} resolves outside the share`);
  const handle = await open(real, 'r');
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new ShareAccessError(`${relativePath} is not a file`);
    if (stats.size > maxBytes) {
      throw new ShareAccessError(`${relativePath} is ${stats.size} bytes, over the limit of ${maxBytes}`);
    }
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}
