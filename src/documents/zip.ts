/**
 * A small ZIP reader for Office documents, written for hostile input: it reads the central
 * directory, and inflates entries with a hard output cap (zlib's maxOutputLength), so a zip
 * bomb or an entry lying about its size stops at the budget instead of filling memory.
 * Reading every entry through here before handing the file to another library proves what
 * that library can at most decompress.
 */
import { inflateRawSync } from 'node:zlib';
import { DocumentError } from './document-error.js';

export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  declaredSize: number;
  localHeaderOffset: number;
}

const endOfDirectorySignature = 0x06054b50;
const directorySignature = 0x02014b50;
const localSignature = 0x04034b50;

export function isZip(data: Uint8Array): boolean {
  return data.length >= 4 && data[0] === 0x50 && data[1] === 0x4b && data[2] === 0x03 && data[3] === 0x04;
}

/** The entries of the central directory; throws a DocumentError on a damaged archive. */
export function zipEntries(data: Buffer, maxEntries = 10_000): ZipEntry[] {
  // The end-of-directory record is in the last 22 + 65,535 (comment) bytes.
  const searchFrom = Math.max(0, data.length - 22 - 0xffff);
  let end = -1;
  for (let offset = data.length - 22; offset >= searchFrom; offset--) {
    if (data.readUInt32LE(offset) === endOfDirectorySignature) {
      end = offset;
      break;
    }
  }
  if (end < 0) throw new DocumentError('damaged ZIP archive: no central directory (truncated file?)');
  const count = data.readUInt16LE(end + 10);
  const directoryOffset = data.readUInt32LE(end + 16);
  if (count === 0xffff || directoryOffset === 0xffffffff)
    throw new DocumentError('ZIP64 archives are not supported for documents');
  if (count > maxEntries)
    throw new DocumentError(`ZIP archive has ${count} entries, more than ${maxEntries}`);
  const entries: ZipEntry[] = [];
  let offset = directoryOffset;
  for (let index = 0; index < count; index++) {
    if (offset + 46 > data.length || data.readUInt32LE(offset) !== directorySignature)
      throw new DocumentError('damaged ZIP archive: bad central directory entry');
    const nameLength = data.readUInt16LE(offset + 28);
    const extraLength = data.readUInt16LE(offset + 30);
    const commentLength = data.readUInt16LE(offset + 32);
    entries.push({
      method: data.readUInt16LE(offset + 10),
      compressedSize: data.readUInt32LE(offset + 20),
      declaredSize: data.readUInt32LE(offset + 24),
      localHeaderOffset: data.readUInt32LE(offset + 42),
      name: data.toString('utf8', offset + 46, offset + 46 + nameLength),
    });
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/**
 * Inflates every entry (or those `wanted`) within `maxBytes` of output in total; throws a
 * DocumentError naming the budget once it is exceeded, whatever the entries declare.
 */
export function readZip(
  data: Buffer,
  maxBytes: number,
  wanted?: (name: string) => boolean,
): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  let remaining = maxBytes;
  for (const entry of zipEntries(data)) {
    if (entry.name.endsWith('/') || (wanted && !wanted(entry.name))) continue;
    if (entry.declaredSize > remaining) throw overBudget(maxBytes);
    const body = readEntry(data, entry, remaining, maxBytes);
    remaining -= body.length;
    files.set(entry.name, body);
  }
  return files;
}

function readEntry(data: Buffer, entry: ZipEntry, limit: number, maxBytes: number): Buffer {
  const at = entry.localHeaderOffset;
  if (at + 30 > data.length || data.readUInt32LE(at) !== localSignature)
    throw new DocumentError(`damaged ZIP archive: bad local header for ${entry.name}`);
  const start = at + 30 + data.readUInt16LE(at + 26) + data.readUInt16LE(at + 28);
  const compressed = data.subarray(start, start + entry.compressedSize);
  if (compressed.length < entry.compressedSize)
    throw new DocumentError(`damaged ZIP archive: ${entry.name} is cut short (truncated file?)`);
  if (entry.method === 0) {
    if (compressed.length > limit) throw overBudget(maxBytes);
    return compressed;
  }
  if (entry.method !== 8)
    throw new DocumentError(`ZIP entry ${entry.name} uses compression method ${entry.method}, not deflate`);
  try {
    return inflateRawSync(compressed, { maxOutputLength: Math.max(1, limit) });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw overBudget(maxBytes);
    throw new DocumentError(
      `damaged ZIP archive: ${entry.name} does not inflate (${(error as Error).message})`,
    );
  }
}

function overBudget(maxBytes: number): DocumentError {
  return new DocumentError(
    `ZIP archive decompresses to more than ${maxBytes} bytes (max_unzipped_mb); refusing it as a possible zip bomb`,
  );
}
