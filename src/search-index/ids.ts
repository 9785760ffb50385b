import { sha256Uuid } from '../runtime/sha256-uuid.js';

/**
 * A UUID (version 8, "custom") derived from `text`: the same document or segment always gets
 * the same id, so re-ingesting a URL updates its rows instead of adding new ones.
 */
export function deterministicUuid(text: string): string {
  return sha256Uuid(text);
}

export function documentIdFor(sourceKey: string): string {
  return deterministicUuid(`document:${sourceKey}`);
}

export function segmentIdFor(documentId: string, segmentIndex: number): string {
  return deterministicUuid(`segment:${documentId}:${segmentIndex}`);
}
