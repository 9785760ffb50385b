/**
 * An export as users download it, a ZIP (ChatGPT "Export data", Slack workspace export), read
 * in place: the central directory is read from the end of the file, and each entry is
 * streamed and inflated when a parser opens it, so a 2 GB `conversations.json` inside a ZIP
 * is never held in memory. The bytes come from a file or an object (ranged reads), so the same
 * code serves a share and the object store. ZIP64 (exports over 4 GB or 65,535 files) is read.
 */
import { type Readable, Transform } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
import { ExportError } from '../model.js';
import type { PackageFile } from './package-files.js';

/** Ranged reads of one file or object; `end` is inclusive, as in an HTTP Range header. */
export interface RandomAccess {
  size: number;
  read(start: number, end: number): Promise<Buffer>;
  stream(start: number, end: number): Promise<Readable>;
}

interface Entry {
  name: string;
  method: number;
  flags: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

const endOfDirectory = 0x06054b50;
const zip64Locator = 0x07064b50;
const zip64End = 0x06064b50;
const directoryEntry = 0x02014b50;
const localHeader = 0x04034b50;
/** A central directory bigger than this is not an export's (a million files). */
const maxDirectoryBytes = 64 * 1024 * 1024;

export function isZipName(name: string): boolean {
  return /\.zip$/i.test(name);
}

/**
 * The files of the ZIP `name` as package files, paths relative to its one top folder when all
 * entries share one (`chatgpt-export/conversations.json` reads as `conversations.json`).
 * Folders, macOS resource forks (`__MACOSX/`) and hidden files are left out.
 */
export async function zipPackageFiles(source: RandomAccess, name: string): Promise<PackageFile[]> {
  const entries = (await centralDirectory(source, name)).filter(
    (entry) =>
      !entry.name.endsWith('/') &&
      !entry.name.startsWith('__MACOSX/') &&
      !entry.name.split('/').some((part) => part.startsWith('.')),
  );
  const top = commonFolder(entries.map((entry) => entry.name));
  return entries.map((entry) => ({
    path: entry.name.slice(top.length),
    open: () => openEntry(source, name, entry),
  }));
}

function commonFolder(paths: readonly string[]): string {
  const first = paths[0];
  if (!first || !first.includes('/')) return '';
  const folder = `${first.slice(0, first.indexOf('/'))}/`;
  return paths.every((path) => path.startsWith(folder)) ? folder : '';
}

async function centralDirectory(source: RandomAccess, name: string): Promise<Entry[]> {
  const damaged = (why: string) => new ExportError(`${name} is not a readable ZIP archive: ${why}`);
  if (source.size < 22) throw damaged('too short (truncated file?)');
  // The end record is in the last 22 bytes plus a comment of up to 65,535.
  const tailStart = Math.max(0, source.size - 22 - 0xffff - 20);
  const tail = await source.read(tailStart, source.size - 1);
  let end = -1;
  for (let offset = tail.length - 22; offset >= 0; offset--)
    if (tail.readUInt32LE(offset) === endOfDirectory) {
      end = offset;
      break;
    }
  if (end < 0) throw damaged('no central directory (truncated file?)');
  let count = tail.readUInt16LE(end + 10);
  let directorySize = tail.readUInt32LE(end + 12);
  let directoryOffset = tail.readUInt32LE(end + 16);
  if (end >= 20 && tail.readUInt32LE(end - 20) === zip64Locator) {
    const recordOffset = Number(tail.readBigUInt64LE(end - 20 + 8));
    const record = await source.read(recordOffset, recordOffset + 55);
    if (record.readUInt32LE(0) !== zip64End) throw damaged('bad ZIP64 end record');
    count = Number(record.readBigUInt64LE(32));
    directorySize = Number(record.readBigUInt64LE(40));
    directoryOffset = Number(record.readBigUInt64LE(48));
  }
  if (directorySize > maxDirectoryBytes) throw damaged(`a central directory of ${directorySize} bytes`);
  if (directoryOffset + directorySize > source.size) throw damaged('the central directory is cut off');
  const directory =
    directorySize > 0
      ? await source.read(directoryOffset, directoryOffset + directorySize - 1)
      : Buffer.alloc(0);
  const entries: Entry[] = [];
  let offset = 0;
  for (let index = 0; index < count; index++) {
    if (offset + 46 > directory.length || directory.readUInt32LE(offset) !== directoryEntry)
      throw damaged('bad central directory entry');
    const nameLength = directory.readUInt16LE(offset + 28);
    const extraLength = directory.readUInt16LE(offset + 30);
    const commentLength = directory.readUInt16LE(offset + 32);
    const entry: Entry = {
      flags: directory.readUInt16LE(offset + 8),
      method: directory.readUInt16LE(offset + 10),
      compressedSize: directory.readUInt32LE(offset + 20),
      size: directory.readUInt32LE(offset + 24),
      localHeaderOffset: directory.readUInt32LE(offset + 42),
      name: directory.toString('utf8', offset + 46, offset + 46 + nameLength),
    };
    applyZip64(entry, directory.subarray(offset + 46 + nameLength, offset + 46 + nameLength + extraLength));
    entries.push(entry);
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** Sizes and offset that did not fit 32 bits are in the ZIP64 extra field (id 1), in this order. */
function applyZip64(entry: Entry, extra: Buffer): void {
  for (let at = 0; at + 4 <= extra.length; ) {
    const id = extra.readUInt16LE(at);
    const length = extra.readUInt16LE(at + 2);
    if (id === 1) {
      let field = at + 4;
      const next = () => {
        const value = field + 8 <= at + 4 + length ? Number(extra.readBigUInt64LE(field)) : undefined;
        field += 8;
        return value;
      };
      if (entry.size === 0xffffffff) entry.size = next() ?? entry.size;
      if (entry.compressedSize === 0xffffffff) entry.compressedSize = next() ?? entry.compressedSize;
      if (entry.localHeaderOffset === 0xffffffff) entry.localHeaderOffset = next() ?? entry.localHeaderOffset;
      return;
    }
    at += 4 + length;
  }
}

async function openEntry(source: RandomAccess, name: string, entry: Entry): Promise<Readable> {
  const where = `${name}: ${entry.name}`;
  if (entry.flags & 1) throw new ExportError(`${where} is encrypted; export it without a password`);
  if (entry.method !== 0 && entry.method !== 8)
    throw new ExportError(`${where} uses compression method ${entry.method}, not deflate`);
  const header = await source.read(entry.localHeaderOffset, entry.localHeaderOffset + 29);
  if (header.length < 30 || header.readUInt32LE(0) !== localHeader)
    throw new ExportError(`${where}: bad local header (damaged archive)`);
  const start = entry.localHeaderOffset + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
  if (start + entry.compressedSize > source.size)
    throw new ExportError(`${where} is cut short (truncated archive?)`);
  if (entry.compressedSize === 0) return emptyStream();
  const raw = await source.stream(start, start + entry.compressedSize - 1);
  if (entry.method === 0) return raw;
  const inflate = createInflateRaw();
  raw.on('error', (error) => inflate.destroy(error));
  inflate.on('close', () => raw.destroy());
  return raw.pipe(inflate);
}

function emptyStream(): Readable {
  const stream = new Transform();
  stream.end();
  return stream;
}
