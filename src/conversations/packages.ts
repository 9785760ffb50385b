/**
 * Where packages (exports) are found and how their files are opened: a directory of a file
 * share (each export file, each ZIP, and each Slack or ChatGPT export folder is a package), or
 * the object store (one object, a ZIP, or every object under a prefix). Nothing here reads a
 * whole file.
 */
import { createReadStream } from 'node:fs';
import { lstat, open, opendir } from 'node:fs/promises';
import path from 'node:path';
import type { ObjectStore } from '../storage/object-store.js';
import { looksLikeChatGpt } from './formats/export-layout.js';
import type { PackageFile } from './formats/package-files.js';
import { looksLikeSlack } from './formats/slack.js';
import { isZipName, type RandomAccess, zipPackageFiles } from './formats/zip-package.js';

export interface LocalPackage {
  /** Path relative to the share root (`''` when the root itself is a Slack export). */
  path: string;
  size: number;
}

const exportFile = /\.(json|jsonl)$/i;
const anyFile = /./;

/** Whether the files of a folder make it one export: Slack, or ChatGPT unzipped. */
function isExportFolder(paths: readonly string[]): boolean {
  return looksLikeSlack(paths) || looksLikeChatGpt(paths);
}

/**
 * The packages directly under `root` (already resolved): export files, ZIPs, and Slack and
 * ChatGPT export folders. A root that is itself such a folder is one package (`''`).
 */
export async function listLocalPackages(root: string): Promise<LocalPackage[]> {
  const top = await relativeFiles(root, 2, anyFile);
  if (isExportFolder(top.map((file) => file.path))) return [{ path: '', size: sum(top) }];
  const packages: LocalPackage[] = [];
  for await (const entry of await opendir(root)) {
    if (entry.name.startsWith('.')) continue;
    const full = path.join(root, entry.name);
    if (entry.isFile() && (exportFile.test(entry.name) || isZipName(entry.name)))
      packages.push({ path: entry.name, size: (await lstat(full)).size });
    else if (entry.isDirectory()) {
      const files = await relativeFiles(full, 2, anyFile);
      const paths = files.map((file) => file.path);
      const exports = paths.filter((file) => exportFile.test(file));
      if (isExportFolder(paths)) packages.push({ path: entry.name, size: sum(files) });
      else if (exports.length === 1) packages.push({ path: `${entry.name}/${exports[0]}`, size: sum(files) });
    }
  }
  return packages.sort((a, b) => (a.path < b.path ? -1 : 1));
}

/**
 * The files of a package on disk: the file itself, the entries of a ZIP, or every file of an
 * export folder (three levels deep; which of them hold conversations is the parser's call).
 */
export async function localPackageFiles(location: string): Promise<PackageFile[]> {
  const stats = await lstat(location);
  if (stats.isFile() && isZipName(location))
    return zipPackageFiles(fileAccess(location, stats.size), path.basename(location));
  if (stats.isFile())
    return [{ path: path.basename(location), open: async () => createReadStream(location) }];
  const files = await relativeFiles(location, 3, anyFile);
  return files.map((file) => ({
    path: file.path,
    open: async () => createReadStream(path.join(location, file.path)),
  }));
}

function fileAccess(location: string, size: number): RandomAccess {
  return {
    size,
    async read(start, end) {
      const handle = await open(location, 'r');
      try {
        const buffer = Buffer.alloc(Math.max(0, end - start + 1));
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
        return buffer.subarray(0, bytesRead);
      } finally {
        await handle.close();
      }
    },
    stream: async (start, end) => createReadStream(location, { start, end }),
  };
}

/** Files under `directory` matching `names`, to `depth` levels, relative and sorted; no symlinks, no hidden files. */
async function relativeFiles(
  directory: string,
  depth: number,
  names: RegExp,
  prefix = '',
): Promise<Array<{ path: string; size: number }>> {
  const found: Array<{ path: string; size: number }> = [];
  for await (const entry of await opendir(path.join(directory, prefix))) {
    if (entry.name.startsWith('.')) continue;
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory() && depth > 1)
      found.push(...(await relativeFiles(directory, depth - 1, names, relative)));
    else if (entry.isFile() && names.test(entry.name))
      found.push({ path: relative, size: (await lstat(path.join(directory, relative))).size });
  }
  return found.sort((a, b) => (a.path < b.path ? -1 : 1));
}

/**
 * The files of a package in the object store: one object, the entries of a ZIP object (read
 * by ranges), or every object under a prefix ending in `/`.
 */
export async function storagePackageFiles(storage: ObjectStore, keyOrPrefix: string): Promise<PackageFile[]> {
  if (!keyOrPrefix.endsWith('/') && isZipName(keyOrPrefix)) {
    const info = await storage.stat(keyOrPrefix);
    if (!info) throw new Error(`object ${keyOrPrefix} not found`);
    return zipPackageFiles(
      {
        size: info.size,
        read: async (start, end) => {
          const chunks: Buffer[] = [];
          for await (const chunk of await storage.stream(keyOrPrefix, { start, end }))
            chunks.push(chunk as Buffer);
          return Buffer.concat(chunks);
        },
        stream: (start, end) => storage.stream(keyOrPrefix, { start, end }),
      },
      path.posix.basename(keyOrPrefix),
    );
  }
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
      if (object.key.endsWith('.meta.json')) continue;
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
