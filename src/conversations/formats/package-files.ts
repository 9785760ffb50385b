/**
 * A package (one export) as the parsers see it: named files opened as byte streams, whether
 * they live on a file share or in the object store. Bytes are checked as UTF-8 on the way,
 * so a corrupt export fails with where it broke instead of turning into replacement characters.
 */
import { type Duplex, pipeline, type Readable, Transform } from 'node:stream';
import { ExportError } from '../model.js';

export interface PackageFile {
  /** Path inside the package, `/`-separated (`general/2024-03-01.json`). */
  path: string;
  open(): Promise<Readable>;
}

/**
 * `stream` checked as UTF-8 and through `transforms` (a JSON parser, filters): any stage's
 * error, the source's included, ends the returned stream with that error.
 */
export function checkedPipeline(stream: Readable, path: string, ...transforms: Duplex[]): Readable {
  return pipeline([stream, utf8Checked(path), ...transforms], () => {}) as unknown as Readable;
}

/** A pass-through stream that fails at the first byte sequence that is not UTF-8. */
export function utf8Checked(path: string): Transform {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let offset = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      try {
        decoder.decode(chunk, { stream: true });
      } catch {
        callback(new ExportError(`${path} is not valid UTF-8 (in the bytes after offset ${offset})`));
        return;
      }
      offset += chunk.length;
      callback(null, chunk);
    },
    flush(callback) {
      try {
        decoder.decode();
        callback();
      } catch {
        callback(new ExportError(`${path} ends inside a UTF-8 character (truncated?)`));
      }
    },
  });
}

/** The lines of a byte stream as raw bytes (no decoding), the last one without its newline. */
export async function* byteLines(stream: Readable): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let start = 0;
    for (let index = chunk.indexOf(10); index >= 0; index = chunk.indexOf(10, start)) {
      pending.push(chunk.subarray(start, index));
      yield Buffer.concat(pending);
      pending = [];
      start = index + 1;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  }
  if (pending.length > 0) yield Buffer.concat(pending);
}
