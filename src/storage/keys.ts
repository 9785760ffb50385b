/**
 * Storage keys are `/`-separated relative paths such as `<execution_id>/<stage>/page.md`.
 * Every key that reaches an object store passes `assertValidKey`, so no implementation can be
 * steered outside its root by `..`, an absolute path, a backslash or a NUL byte.
 */
import { AppError } from '../errors.js';

export const SIDECAR_SUFFIX = '.meta.json';
export const MAX_KEY_BYTES = 1024;
/** A file name's limit (255 bytes) less the sidecar suffix, which the last segment takes on. */
export const MAX_SEGMENT_BYTES = 255 - SIDECAR_SUFFIX.length;

/** Why `key` is not a valid object key, or undefined when it is. */
export function keyProblem(key: string, { allowSidecar = false } = {}): string | undefined {
  if (key.length === 0) return 'key is empty';
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) return `key is longer than ${MAX_KEY_BYTES} bytes`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we refuse
  if (/[\u0000-\u001f\u007f]/.test(key)) return 'key contains a NUL or control character';
  if (key.includes('\\')) return 'key contains a backslash; use / to separate segments';
  if (key.startsWith('/')) return 'key is absolute; keys are relative paths';
  if (/^[a-zA-Z]:/.test(key)) return 'key starts with a drive letter';
  if (key.endsWith('/')) return 'key ends with /; an object key names a file, not a folder';
  for (const segment of key.split('/')) {
    if (segment === '') return 'key contains an empty segment (//)';
    // A segment is a file or folder name on the filesystem store: longer ones cannot exist.
    if (Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES)
      return `key has a segment longer than ${MAX_SEGMENT_BYTES} bytes`;
    if (segment === '.' || segment === '..') return `key contains a "${segment}" segment`;
  }
  if (!allowSidecar && key.endsWith(SIDECAR_SUFFIX))
    return `keys ending in ${SIDECAR_SUFFIX} are reserved for sidecars`;
  return undefined;
}

export function assertValidKey(key: string, options: { allowSidecar?: boolean } = {}): void {
  const problem = keyProblem(key, options);
  if (problem) throw new AppError('storage_key_invalid', `invalid storage key ${quoteKey(key)}: ${problem}`);
}

/** A key as error messages quote it: at most 200 characters of it, however long it is. */
export function quoteKey(key: string): string {
  return key.length > 200
    ? `${JSON.stringify(key.slice(0, 200))}… (${key.length} characters)`
    : JSON.stringify(key);
}

/**
 * A prefix may end with `/` and may be empty, but otherwise follows the key rules: it is the
 * start of a key, so `..` or an absolute path is refused for the same reasons.
 */
export function assertValidPrefix(prefix: string): void {
  if (prefix === '') return;
  const trimmed = prefix.endsWith('/') ? prefix.slice(0, -1) : prefix;
  const problem = keyProblem(trimmed, { allowSidecar: true });
  if (problem)
    throw new AppError('storage_key_invalid', `invalid storage prefix ${quoteKey(prefix)}: ${problem}`);
}

export function isSidecarKey(key: string): boolean {
  return key.endsWith(SIDECAR_SUFFIX);
}

/**
 * `name` made usable as one segment of a key: characters other than letters, digits, `.`,
 * `_` and `-` become `_`, no leading dots, at most 120 characters, and never the sidecar suffix.
 */
export function keySegment(name: string): string {
  const cleaned = name.replace(/[^\p{L}\p{N}._-]+/gu, '_').replace(/^\.+/, '');
  const short = cleaned.slice(0, 120) || 'file';
  return short.endsWith(SIDECAR_SUFFIX) ? `${short}_` : short;
}
