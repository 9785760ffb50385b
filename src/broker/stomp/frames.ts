/**
 * STOMP 1.2 frames: encoding and an incremental parser; every frame Weir sends is built here.
 * Bodies are binary-safe (always sent with content-length). Header names and values are
 * escaped as 1.2 requires (\\ -> \\\\, CR -> \\r, LF -> \\n, : -> \\c), except in CONNECT, STOMP
 * and CONNECTED frames, whose headers the specification says are not escaped (a broker reads
 * them verbatim, so escaping would change a password holding a colon). Those frames cannot
 * carry a line break at all: a header holding CR or LF would end the header line and inject
 * the rest as headers of its own, so encodeFrame refuses it. NUL is refused in every header.
 *
 * Every message sent, delivered, acknowledged and receipted passes through here (four frames a
 * message on the STOMP path), so both directions take the common case first: a header with
 * nothing to escape is tested once and copied as it is, a frame is one allocation, and the
 * parser finds a frame's end without searching the rest of what it has buffered.
 */
export interface Frame {
  command: string;
  headers: Record<string, string>;
  body: Uint8Array;
}

const NULL = 0;
const LF = 10;
const CR = 13;
const MAX_FRAME_BYTES = 64 * 1024 * 1024;

/** What an escaped header must change, and NUL, which no header may hold. */
const SPECIAL = /[\\\r\n:\0]/;
const COMMAND = /^[A-Z]+$/;

function escapeValue(value: string): string {
  return value
    .replaceAll('\\', '\\\\')
    .replaceAll('\r', '\\r')
    .replaceAll('\n', '\\n')
    .replaceAll(':', '\\c');
}

function unescapeValue(value: string): string {
  return value.replace(/\\([\\rnc])/g, (_, code: string) =>
    code === 'r' ? '\r' : code === 'n' ? '\n' : code === 'c' ? ':' : '\\',
  );
}

const unescapedCommands = new Set(['CONNECT', 'STOMP', 'CONNECTED']);

/** Thrown for a header that no STOMP frame can carry; nothing has been sent. */
export class UnencodableHeader extends Error {
  override name = 'UnencodableHeader';
}

/** A header name or value as the frame carries it; throws for one no frame can carry. */
function headerText(text: string, name: string, verbatim: boolean, command: string): string {
  if (!SPECIAL.test(text)) return text;
  if (text.includes('\0'))
    throw new UnencodableHeader(`the STOMP header ${JSON.stringify(name)} contains a NUL character`);
  if (!verbatim) return escapeValue(text);
  if (/[\r\n]/.test(text)) {
    throw new UnencodableHeader(
      `a STOMP ${command} header cannot contain a line break (STOMP 1.2 does not escape ${command} headers)`,
    );
  }
  return text;
}

export function encodeFrame(command: string, headers: Record<string, string>, body?: Uint8Array): Buffer {
  if (!COMMAND.test(command))
    throw new UnencodableHeader(`${JSON.stringify(command)} is not a STOMP command`);
  const verbatim = unescapedCommands.has(command);
  let head = `${command}\n`;
  for (const name of Object.keys(headers)) {
    const value = headers[name] as string;
    head += `${headerText(name, name, verbatim, command)}:${headerText(value, name, verbatim, command)}\n`;
  }
  if (body) head += `content-length:${body.byteLength}\n`;
  head += '\n';
  // One buffer for the frame: head, body and the closing NUL.
  const headBytes = Buffer.byteLength(head);
  const bodyBytes = body ? body.byteLength : 0;
  const frame = Buffer.allocUnsafe(headBytes + bodyBytes + 1);
  frame.write(head, 0, 'utf8');
  if (body) frame.set(body, headBytes);
  frame[headBytes + bodyBytes] = NULL;
  return frame;
}

/** What an ERROR frame says: its `message` header, else its body. */
export function stompErrorMessage(frame: Frame): string {
  return frame.headers.message ?? new TextDecoder().decode(frame.body);
}

/** The command and headers of a frame's head (its text up to the blank line, EOLs LF or CRLF). */
function parseHead(text: string): { command: string; headers: Record<string, string> } {
  let lineEnd = text.indexOf('\n');
  if (lineEnd < 0) lineEnd = text.length;
  const command = text.slice(0, text.charCodeAt(lineEnd - 1) === CR ? lineEnd - 1 : lineEnd);
  // A head without a backslash has nothing to unescape (the common case: ids, destinations).
  const escaped = !unescapedCommands.has(command) && text.includes('\\');
  const headers: Record<string, string> = {};
  while (lineEnd < text.length) {
    const start = lineEnd + 1;
    lineEnd = text.indexOf('\n', start);
    if (lineEnd < 0) lineEnd = text.length;
    const end = text.charCodeAt(lineEnd - 1) === CR ? lineEnd - 1 : lineEnd;
    const colon = text.indexOf(':', start);
    if (colon < 0 || colon >= end) continue;
    const name = escaped ? unescapeValue(text.slice(start, colon)) : text.slice(start, colon);
    // The first occurrence of a repeated header wins (STOMP 1.2).
    if (!Object.hasOwn(headers, name))
      headers[name] = escaped ? unescapeValue(text.slice(colon + 1, end)) : text.slice(colon + 1, end);
  }
  return { command, headers };
}

/**
 * The index of the LF ending the last header line of a head starting at `from` (the blank line
 * follows it, LF or CRLF), or -1 while the head is incomplete.
 */
function findHeadEnd(buffer: Buffer, from: number): number {
  for (let lf = buffer.indexOf(LF, from); lf >= 0; lf = buffer.indexOf(LF, lf + 1)) {
    const next = buffer[lf + 1];
    if (next === LF || (next === CR && buffer[lf + 2] === LF)) return lf;
  }
  return -1;
}

/** Feeds bytes in, calls `onFrame` for each complete frame and `onHeartbeat` for bare EOLs. */
export function createFrameParser(onFrame: (frame: Frame) => void, onHeartbeat: () => void = () => {}) {
  let buffer: Buffer = Buffer.alloc(0);
  /** Where the next frame starts in `buffer`: frames are read in place, the rest cut off once. */
  let offset = 0;
  /** Chunks held back while a frame whose size is known is still incomplete: joined once. */
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let awaitedBytes = 0;

  function parseOne(): boolean {
    // Skip heart-beat EOLs between frames.
    let start = offset;
    while (start < buffer.length && (buffer[start] === LF || buffer[start] === CR)) start++;
    if (start > offset) {
      offset = start;
      onHeartbeat();
    }
    if (start === buffer.length) return false;
    const lf = findHeadEnd(buffer, start);
    if (lf < 0) {
      if (buffer.length - start > MAX_FRAME_BYTES) throw new Error('STOMP frame header too large');
      return false;
    }
    const bodyStart = buffer[lf + 1] === LF ? lf + 2 : lf + 3;
    const headEnd = buffer[lf - 1] === CR ? lf - 1 : lf;
    const { command, headers } = parseHead(buffer.toString('utf8', start, headEnd));
    let bodyEnd: number;
    const length = headers['content-length'];
    if (length !== undefined) {
      const size = Number(length);
      if (!Number.isInteger(size) || size < 0 || size > MAX_FRAME_BYTES)
        throw new Error(`bad content-length ${length}`);
      if (buffer.length < bodyStart + size + 1) {
        awaitedBytes = bodyStart + size + 1 - start;
        return false;
      }
      bodyEnd = bodyStart + size;
    } else {
      bodyEnd = buffer.indexOf(NULL, bodyStart);
      if (bodyEnd < 0) return false;
    }
    // A copy: the frame must not hold the whole chunk it came in.
    const body = new Uint8Array(bodyEnd - bodyStart);
    buffer.copy(body, 0, bodyStart, bodyEnd);
    offset = bodyEnd + 1;
    onFrame({ command, headers, body });
    return true;
  }

  return {
    push(chunk: Buffer) {
      if (awaitedBytes > 0) {
        // A large body arriving in many chunks: concatenating on each would copy it each time.
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes < awaitedBytes) return;
        buffer = Buffer.concat(pending, pendingBytes);
        pending = [];
        pendingBytes = 0;
        awaitedBytes = 0;
      } else buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      offset = 0;
      try {
        while (parseOne()) {}
      } finally {
        // What is left: the start of the next frame (or nothing).
        buffer = offset >= buffer.length ? Buffer.alloc(0) : buffer.subarray(offset);
        offset = 0;
      }
      if (awaitedBytes > 0) {
        pending = [buffer];
        pendingBytes = buffer.length;
        buffer = Buffer.alloc(0);
      }
    },
  };
}
