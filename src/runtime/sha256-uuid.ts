/**
 * Deterministic UUIDs: the same text always gives the same id (a fan-out's outputs, a
 * document's segments), so work done twice is recognised as done.
 */
import { hash } from 'node:crypto';

const HEX_DIGITS = '0123456789abcdef';

/**
 * A UUID (version 8, RFC 9562 custom) from SHA-256 of `text`: its first 16 bytes with the
 * version (8) in the high nibble of byte 6 and the variant (binary 10) in the top bits of
 * byte 8. Written from the one-shot hex digest: a Hash object and a Buffer per id cost about
 * four times as much, and a fan-out derives one id per output (100,000 in bench:engine).
 */
export function sha256Uuid(text: string): string {
  const hex = hash('sha256', text, 'hex');
  const variant = HEX_DIGITS[(Number.parseInt(hex[16] as string, 16) & 0x3) | 0x8] as string;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
