/**
 * STOMP 1.2 frames: encoding and an incremental parser; every frame Weir sends is built here.
 * Bodies are binary-safe (always sent with content-length). Header names and values are
 * escaped as 1.2 requires (\\ -> \\\\, CR -> \\r, LF -> \\n, : -> \\c), except in CONNECT, STOMP
 * and CONNECTED frames, whose headers the specification says are not escaped (a broker reads
 * them verbatim, so escaping would change a password holding a colon). Those frames cannot
 * carry a line break at all: a header holding CR or LF would end the header line and inject
 * the rest as headers of its own, so encodeFrame refuses it. NUL is refused in every header.
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

function verbatim(command: string): (text: string) => string {
  return (text) => {
    if (/[\r\n]/.test(text)) {
      throw new UnencodableHeader(
        `a STOMP ${command} header cannot contain a line break (STOMP 1.2 does not escape ${command} headers)`,
      );
    }
    return text;
  };
}

export function encodeFrame(command: string, headers: Record<string, string>, body?: Uint8Array): Buffer {
  if (!/^[A-Z]+$/.test(command))
    throw new UnencodableHeader(`${JSON.stringify(command)} is not a STOMP command`);
  for (const [name, value] of Object.entries(headers)) {
    if (name.includes('\0') || value.includes('\0'))
      throw new UnencodableHeader(`the STOMP header ${JSON.stringify(name)} contains a NUL character`);
  }
  const escapeHeader = unescapedCommands.has(command) ? verbatim(command) : escapeValue;
  const lines = [command];
  for (const [name, value] of Object.entries(headers))
    lines.push(`${escapeHeader(name)}:${escapeHeader(value)}`);
  if (body) lines.push(`content-length:${body.byteLength}`);
  const head = Buffer.from(`${lines.join('\n')}\n\n`, 'utf8');
  return Buffer.concat([
    head,
    body ? Buffer.from(body.buffer, body.byteOffset, body.byteLength) : Buffer.alloc(0),
    Buffer.from([NULL]),
  ]);
}

/** What an ERROR frame says: its `message` header, else its body. */
export function stompErrorMessage(frame: Frame): string {
  return frame.headers.message ?? new TextDecoder().decode(frame.body);
}

/** Feeds bytes in, calls `onFrame` for each complete frame and `onHeartbeat` for bare EOLs. */
export function createFrameParser(onFrame: (frame: Frame) => void, onHeartbeat: () => void = () => {}) {
  let buffer: Buffer = Buffer.alloc(0);

  function parseOne(): boolean {
    // Skip heart-beat EOLs between frames.
    let start = 0;
    while (start < buffer.length && (buffer[start] === LF || buffer[start] === CR)) start++;
    if (start > 0) {
      buffer = buffer.subarray(start);
      onHeartbeat();
    }
    if (buffer.length === 0) return false;
    const headEnd = buffer.indexOf('\n\n');
    const headEndCrlf = buffer.indexOf('\r\n\r\n');
    let bodyStart: number;
    let headText: string;
    if (headEndCrlf >= 0 && (headEnd < 0 || headEndCrlf < headEnd)) {
      headText = buffer.subarray(0, headEndCrlf).toString('utf8');
      bodyStart = headEndCrlf + 4;
    } else if (headEnd >= 0) {
      headText = buffer.subarray(0, headEnd).toString('utf8');
      bodyStart = headEnd + 2;
    } else {
      if (buffer.length > MAX_FRAME_BYTES) throw new Error('STOMP frame header too large');
      return false;
    }
    const [command = '', ...headerLines] = headText.split(/\r?\n/);
    const escaped = !unescapedCommands.has(command);
    const headers: Record<string, string> = {};
    for (const line of headerLines) {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const name = escaped ? unescapeValue(line.slice(0, colon)) : line.slice(0, colon);
      // The first occurrence of a repeated header wins (STOMP 1.2).
      if (!(name in headers))
        headers[name] = escaped ? unescapeValue(line.slice(colon + 1)) : line.slice(colon + 1);
    }
    let bodyEnd: number;
    const length = headers['content-length'];
    if (length !== undefined) {
      const size = Number(length);
      if (!Number.isInteger(size) || size < 0 || size > MAX_FRAME_BYTES)
        throw new Error(`bad content-length ${length}`);
      if (buffer.length < bodyStart + size + 1) return false;
      bodyEnd = bodyStart + size;
    } else {
      bodyEnd = buffer.indexOf(NULL, bodyStart);
      if (bodyEnd < 0) return false;
    }
    const body = new Uint8Array(buffer.subarray(bodyStart, bodyEnd));
    buffer = buffer.subarray(bodyEnd + 1);
    onFrame({ command, headers, body });
    return true;
  }

  return {
    push(chunk: Buffer) {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      while (parseOne()) {}
    },
  };
}
