/**
 * Where packages (exports) are found and how their files are opened: a directory of a file
 * share (each export file, and each Slack export folder, is a package), or the object store
 * (one object, or every object under a prefix). Nothing here reads a whole file.
 */
import { createReadStream } from 'node:fs';
import { lstat, opendir } from 'node:fs/promises';
import path from 'node:path';
import type { ObjectStore } from '../storage/object-store.js';
import type { PackageFile } from './formats/package-files.js';
import { looksLikeSlack } from './formats/slack.js';

export interface LocalPackage {
  /** Path relative to the share root (`''` when the root itself is a Slack export). */
  path: string;
  size: number;
}

const exportFile = /\.(json|jsonl)$/i;

/** The packages directly under `root` (already resolved): export files, and Slack export folders. */
export async function listLocalPackages(root: string): Promise<LocalPackage[]> {
  const top = await relativeFiles(root, 2);
  if (looksLikeSlack(top.map((file) => file.path))) return [{ path: '', size: sum(top) }];
  const packages: LocalPackage[] = [];
  for await (const entry of await opendir(root)) {
    if (entry.name.startsWith('.')) continue;
    const full = path.join(root, entry.name);
    if (entry.isFile() && exportFile.test(entry.name))
      packages.push({ path: entry.name, size: (await lstat(full)).size });
    else if (entry.isDirectory()) {
      const files = await relativeFiles(full, 2);
      const paths = files.map((file) => file.path);
      if (looksLikeSlack(paths)) packages.push({ path: entry.name, size: sum(files) });
      else if (paths.length === 1 && exportFile.test(paths[0] as string))
        packages.push({ path: `${entry.name}/${paths[0]}`, size: sum(files) });
    }
  }
  return packages.sort((a, b) => (a.path < b.path ? -1 : 1));
}

/** The files of a package on disk: the file itself, or every JSON file of a Slack export folder. */
export async function localPackageFiles(location: string): Promise<PackageFile[]> {
  const stats = await lstat(location);
  if (stats.isFile())
    return [{ path: path.basename(location), open: async () => createReadStream(location) }];
  const files = await relativeFiles(location, 3);
  return files.map((file) => ({
    path: file.path,
    open: async () => createReadStream(path.join(location, file.path)),
  }));
}

/** JSON files under `directory` to `depth` levels, relative and sorted; no symlinks, no hidden files. */
async function relativeFiles(
  directory: string,
  depth: number,
  prefix = '',
): Promise<Array<{ path: string; size: number }>> {
  const found: Array<{ path: string; size: number }> = [];
  for await (const entry of await opendir(path.join(directory, prefix))) {
    if (entry.name.startsWith('.')) continue;
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory() && depth > 1)
      found.push(...(await relativeFiles(directory, depth - 1, relative)));
    else if (entry.isFile() && exportFile.test(entry.name))
      found.push({ path: relative, size: (await lstat(path.join(directory, relative))).size });
  }
  return found.sort((a, b) => (a.path < b.path ? -1 : 1));
}

/** The files of a package in the object store: one object, or every object under a prefix ending in `/`. */
export async function storagePackageFiles(storage: ObjectStore, keyOrPrefix: string): Promise<PackageFile[]> {
  if (!keyOrPrefix.endsWith('/'))
    return [{ path: path.posix.basename(keyOrPrefix), open: () => storage.stream(keyOrPrefix) }];
  const files: PackageFile[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await storage.list({
      prefix: keyOrPrefix,
      ...(startAfter ? { startAfter } : {}),
      limit: 1000,
    });
    for (const object of page.objects) {
      if (object.key.endsWith('.meta.json') || !exportFile.test(object.key)) continue;
      const key = object.key;
      files.push({ path: key.slice(keyOrPrefix.length), open: () => storage.stream(key) });
    }
    if (!page.truncated || page.objects.length === 0) break;
    startAfter = page.objects.at(-1)?.key;
  }
  return files;
}

function sum(files: ReadonlyArray<{ size: number }>): number {
  return files.reduce((total, file) => total + file.size, 0);
}
