import { describe, expect, it } from 'vitest';
import { createFrameParser, encodeFrame, type Frame, UnencodableHeader } from './frames.js';

function parseAll(chunks: Buffer[]): Frame[] {
  const frames: Frame[] = [];
  const parser = createFrameParser((frame) => frames.push(frame));
  for (const chunk of chunks) parser.push(chunk);
  return frames;
}

describe('STOMP frames', () => {
  it('round-trips binary bodies containing NUL and escaped headers', () => {
    const body = new Uint8Array([0, 1, 0, 255, 10]);
    const bytes = encodeFrame('SEND', { destination: '/queue/a:b', note: 'line\nbreak\\' }, body);
    const [frame] = parseAll([bytes]);
    expect(frame?.command).toBe('SEND');
    expect(frame?.headers).toMatchObject({
      destination: '/queue/a:b',
      note: 'line\nbreak\\',
      'content-length': '5',
    });
    expect(Array.from(frame?.body ?? [])).toEqual([0, 1, 0, 255, 10]);
  });

  it('parses frames split at any byte, with heart-beats between them', () => {
    const bytes = Buffer.concat([
      Buffer.from('\n\n'),
      encodeFrame('MESSAGE', { 'message-id': '1' }, new Uint8Array([7])),
      Buffer.from('\r\n'),
      Buffer.from('RECEIPT\nreceipt-id:9\n\n\0'),
    ]);
    const frames: Frame[] = [];
    let heartbeats = 0;
    const parser = createFrameParser(
      (frame) => frames.push(frame),
      () => heartbeats++,
    );
    for (const byte of bytes) parser.push(Buffer.from([byte]));
    expect(frames.map((frame) => frame.command)).toEqual(['MESSAGE', 'RECEIPT']);
    expect(frames[1]?.headers['receipt-id']).toBe('9');
    expect(heartbeats).toBeGreaterThan(0);
  });

  it('parses CRLF heads, keeps the first of a repeated header and any header name', () => {
    const [frame] = parseAll([
      Buffer.from('MESSAGE\r\nconstructor:a\\cb\r\nid:1\r\nid:2\r\ncontent-length:2\r\n\r\nhi\0'),
    ]);
    expect(frame?.command).toBe('MESSAGE');
    expect(frame?.headers).toEqual({ constructor: 'a:b', id: '1', 'content-length': '2' });
    expect(new TextDecoder().decode(frame?.body)).toBe('hi');
  });

  it('takes a large body arriving in many chunks, and the frames around it', () => {
    const big = new Uint8Array(300_000).map((_, index) => index % 251);
    const bytes = Buffer.concat([
      encodeFrame('MESSAGE', { 'message-id': 'a' }, new Uint8Array([1])),
      encodeFrame('MESSAGE', { 'message-id': 'b' }, big),
      encodeFrame('RECEIPT', { 'receipt-id': 'c' }),
    ]);
    const chunks: Buffer[] = [];
    for (let offset = 0; offset < bytes.length; offset += 1000)
      chunks.push(bytes.subarray(offset, offset + 1000));
    const frames = parseAll(chunks);
    expect(frames.map((frame) => frame.headers['message-id'] ?? frame.headers['receipt-id'])).toEqual([
      'a',
      'b',
      'c',
    ]);
    expect(Buffer.from(frames[1]?.body ?? []).equals(Buffer.from(big))).toBe(true);
  });

  it('does not escape CONNECT headers', () => {
    expect(encodeFrame('CONNECT', { passcode: 'a:b' }).toString()).toContain('passcode:a:b');
  });

  it('refuses an absurd content-length', () => {
    const parser = createFrameParser(() => {});
    expect(() => parser.push(Buffer.from('MESSAGE\ncontent-length:-5\n\n\0'))).toThrow('bad content-length');
  });
});

describe('STOMP header escaping (issue 17: no header injection)', () => {
  it('escapes CR, LF, colon and backslash in the headers of ordinary frames', () => {
    const text = encodeFrame('SEND', { destination: '/queue/a\r\nx-injected:1', 'x\\y': 'v' }).toString();
    expect(text).toContain('destination:/queue/a\\r\\nx-injected\\c1\n');
    expect(text).toContain('x\\\\y:v\n');
    expect(text.split('\n').some((line) => line.startsWith('x-injected'))).toBe(false);
  });

  it.each([
    ['login', 'guest\r\nx-injected:1'],
    ['host', '/\nx-injected:1'],
    ['passcode', 'secret\r'],
  ])('refuses a line break in the CONNECT header %s instead of sending it', (name, value) => {
    expect(() => encodeFrame('CONNECT', { 'accept-version': '1.2', [name]: value })).toThrow(
      UnencodableHeader,
    );
  });

  it('refuses NUL in any header and a malformed command', () => {
    expect(() => encodeFrame('SEND', { destination: 'a\0b' })).toThrow(UnencodableHeader);
    expect(() => encodeFrame('SEND\nx:1', {})).toThrow(UnencodableHeader);
  });
});
