/**
 * A package (one export) as the parsers see it: named files opened as byte streams, whether
 * they live on a file share or in the object store. Bytes are checked as UTF-8 on the way,
 * so a corrupt export fails with where it broke instead of turning into replacement characters.
 */
import { type Duplex, pipeline, type Readable, Transform } from 'node:stream';
import { asStream, gen } from 'stream-chain';
import { none } from 'stream-chain/defs.js';
import Assembler from 'stream-json/assembler.js';
import parser, { type Token } from 'stream-json/parser.js';
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

/** One element of a top-level JSON array: its value, or why it was not assembled. */
export type BoundedItem =
  | { value: unknown }
  | { overLimit: string; fields: { id?: string; conversation_id?: string; title?: string } };

/**
 * A stream of JSON bytes to the elements of its top-level array, each assembled only while it
 * stays under `maxValues` JSON values and `maxCharacters` characters of strings, keys and
 * numbers: past either, the rest of that element is counted and dropped instead of built (a
 * ChatGPT conversation of 2 million mapping nodes took RSS from 450 MB to 3.2 GB). Its `id`,
 * `conversation_id` and `title` are kept, even after the drop, so the refusal can name it.
 */
export function boundedArrayItems(maxValues: number, maxCharacters: number): Duplex {
  let depth = 0;
  let assembler: Assembler | undefined;
  let values = 0;
  let characters = 0;
  let over: string | undefined;
  let fields: Record<string, string> = {};
  let key: string | undefined;
  const step = (token: Token) => {
    const { name } = token;
    if (depth === 0) {
      if (name !== 'startArray') throw new Error('the top level is not an array');
      depth = 1;
      return none;
    }
    if (depth === 1) {
      if (name === 'endArray') {
        depth = 0;
        return none;
      }
      assembler = new Assembler();
      values = 0;
      characters = 0;
      over = undefined;
      fields = {};
    }
    if (name === 'startObject' || name === 'startArray') depth++;
    else if (name === 'endObject' || name === 'endArray') depth--;
    if (name !== 'keyValue' && name !== 'endObject' && name !== 'endArray') values++;
    const text = 'value' in token && typeof token.value === 'string' ? token.value : '';
    characters += text.length;
    if (depth === 2 && name === 'keyValue') key = text;
    else if (depth === 2 && name === 'stringValue' && key && ['id', 'conversation_id', 'title'].includes(key))
      fields[key] = text.slice(0, 200);
    if (assembler) {
      assembler.consume(token);
      if (values > maxValues) over = `more than ${maxValues} JSON values`;
      else if (characters > maxCharacters) over = `more than ${maxCharacters} characters`;
      // Dropped: nothing more of this element is built.
      if (over) assembler = undefined;
    }
    if (depth > 1) return none;
    const done = over === undefined ? { value: assembler?.current } : { overLimit: over, fields };
    assembler = undefined;
    return done;
  };
  return asStream(gen(parser({ packValues: true, streamValues: false }), step), {
    writableObjectMode: false,
    readableObjectMode: true,
  }) as unknown as Duplex;
}

/**
 * A stream-json object filter (streamers' `objectFilter`) refusing an item of more than
 * `maxValues` tokens while it is assembled: the rest of it is skipped, not built, and the
 * item is left out. `level` is the streamer's (0 for stream-values, 1 for stream-array).
 */
export function underItemLimits(
  maxValues: number,
  level: number,
): (assembler: { depth: number }) => boolean | undefined {
  let tokens = 0;
  return (assembler) => {
    if (++tokens > maxValues) {
      tokens = 0;
      return false;
    }
    // The item is complete: the next token starts another.
    if (assembler.depth <= level) tokens = 0;
    return undefined;
  };
}
