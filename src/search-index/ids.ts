import { createHash } from 'node:crypto';

/**
 * A UUID (version 8, "custom") derived from `text`: the same document or segment always gets
 * the same id, so re-ingesting a URL updates its rows instead of adding new ones.
 */
export function deterministicUuid(text: string): string {
  const bytes = createHash('sha256').update(text).digest().subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x80;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function documentIdFor(sourceKey: string): string {
  return deterministicUuid(`document:${sourceKey}`);
}

export function segmentIdFor(documentId: string, segmentIndex: number): string {
  return deterministicUuid(`segment:${documentId}:${segmentIndex}`);
}
