/**
 * A file share on the local file system (a directory, an SMB or NFS mount): the `local`
 * provider of fileshare_enumerator and fileshare_fetcher. Pipelines name a root directory
 * (and optionally paths under it); only directories and files under the `fileshare_roots`
 * setting may be read, and every path is
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
 * The real path of the root a listed file is read under: `root` when it lies inside one of
 * `allowedRoots`; otherwise `root` still, when the file itself does (a pipeline that lists
 * single paths under a wider root, as weir-docs lists README.md and docs/ under `.`). Throws
 * ShareAccessError when neither is allowed. `allowedShareRoots` (a fetcher's, for its life)
 * keeps the roots found inside an allowed root, so the files of one share do not resolve the
 * share and every allowed root again, a realpath each; readShareFile still resolves each file
 * and refuses one whose real path leaves the root as it was found.
 */
export async function resolveFileRoot(
  root: string,
  relativePath: string,
  allowedRoots: readonly string[],
  allowedShareRoots?: Map<string, string>,
): Promise<string> {
  const known = allowedShareRoots?.get(root);
  if (known !== undefined) return known;
  try {
    const resolved = await resolveShareRoot(root, allowedRoots);
    allowedShareRoots?.set(root, resolved);
    return resolved;
  } catch (error) {
    if (!(error instanceof ShareAccessError) || /does not exist/.test(error.message)) throw error;
    await resolveShareRoot(path.join(root, relativePath), allowedRoots);
    return realpath(path.resolve(root));
  }
}

/**
 * The files under `root` at `entries` (paths relative to it: a file is listed itself, a
 * directory as listShareFiles lists it), each entry checked against `allowedRoots` as a root
 * would be; paths stay relative to `root`. Entries are listed in the order given.
 */
export async function* listShareEntries(
  root: string,
  entries: readonly string[],
  allowedRoots: readonly string[],
  options: ListShareOptions,
): AsyncGenerator<ShareFile> {
  const realRoot = await realpath(path.resolve(root)).catch(() => {
    throw new ShareAccessError(`share root ${root} does not exist`);
  });
  let emitted = 0;
  for (const entry of entries) {
    const target = await resolveShareRoot(path.join(realRoot, entry), allowedRoots);
    if (!isInside(target, realRoot)) throw new ShareAccessError(`path ${entry} leaves the share ${root}`);
    const prefix = path.relative(realRoot, target).split(path.sep).join('/');
    const stats = await lstat(target);
    if (stats.isDirectory()) {
      for await (const file of listShareFiles(target, { ...options, maxFiles: options.maxFiles - emitted })) {
        yield { ...file, path: prefix ? `${prefix}/${file.path}` : file.path };
        emitted++;
      }
    } else if (stats.isFile()) {
      const extension = path.extname(target).toLowerCase();
      if (options.extensions.length > 0 && !options.extensions.includes(extension)) continue;
      yield {
        path: prefix,
        name: path.basename(target),
        size: stats.size,
        modified_at: stats.mtime.toISOString(),
      };
      emitted++;
    }
    if (emitted >= options.maxFiles || options.signal?.aborted) return;
  }
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
