/**
 * Text decoding for fetched pages: the charset named by Content-Type wins, then a `<meta
 * charset>` or `<meta http-equiv="Content-Type">` in the first bytes, then a byte-order mark,
 * then UTF-8. Node's TextDecoder (full ICU) decodes the legacy encodings (windows-1252,
 * ISO-8859-x, Shift_JIS, ...) the WHATWG Encoding standard lists; an unknown label fails
 * clearly rather than producing mojibake.
 */
import { TextDecoder } from 'node:util';

/** The WHATWG prescan reads at most this many bytes for a meta charset. */
const META_SCAN_BYTES = 1024;

export function charsetFromContentType(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType);
  return match?.[1]?.toLowerCase();
}

export function charsetFromMeta(head: Uint8Array): string | undefined {
  // Bytes as latin1 keep a 1:1 mapping, enough to find an ASCII-spelled declaration.
  const text = Buffer.from(head.subarray(0, META_SCAN_BYTES)).toString('latin1');
  const direct = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(text);
  return direct?.[1]?.toLowerCase();
}

export function charsetFromBom(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  return undefined;
}

/**
 * True when the bytes do not look like text: a NUL byte in the first 8 KB (no HTML or XML in
 * an 8-bit or UTF-8 encoding has one), unless a UTF-16 BOM says otherwise.
 */
export function looksBinary(bytes: Uint8Array): boolean {
  const bom = charsetFromBom(bytes);
  if (bom === 'utf-16be' || bom === 'utf-16le') return false;
  const sample = bytes.subarray(0, 8192);
  return sample.includes(0);
}

export interface DecodedText {
  text: string;
  charset: string;
}

/** Decodes a fetched body by the rules above; throws on an encoding TextDecoder does not know. */
export function decodeBody(bytes: Uint8Array, contentType: string | undefined): DecodedText {
  const charset =
    charsetFromContentType(contentType) ?? charsetFromMeta(bytes) ?? charsetFromBom(bytes) ?? 'utf-8';
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset);
  } catch {
    throw new Error(`the page declares charset ${JSON.stringify(charset)}, which is not a known encoding`);
  }
  if (decoder.encoding === 'windows-1252')
    return { text: decodeWindows1252(bytes), charset: decoder.encoding };
  // TextDecoder drops a BOM matching its encoding; replacement characters mark invalid bytes.
  return { text: decoder.decode(bytes), charset: decoder.encoding };
}

/**
 * WHATWG index-windows-1252 for 0x80-0x9F; every other byte is its own code point. Node
 * 20.18.3+ decodes windows-1252 (and the latin1/iso-8859-1 labels that map to it) as plain
 * Latin-1, turning curly quotes and the euro sign into C1 controls (nodejs/node#60888,
 * #56542), so this label is decoded here.
 */
const windows1252High = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d,
  0x17d, 0x8f, 0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a,
  0x153, 0x9d, 0x17e, 0x178,
];

export function decodeWindows1252(bytes: Uint8Array): string {
  let text = '';
  const chunk = 8192;
  for (let start = 0; start < bytes.length; start += chunk) {
    const codes = Array.from(bytes.subarray(start, start + chunk), (byte) =>
      byte >= 0x80 && byte <= 0x9f ? (windows1252High[byte - 0x80] as number) : byte,
    );
    text += String.fromCharCode(...codes);
  }
  return text;
}
