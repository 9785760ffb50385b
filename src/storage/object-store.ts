/**
 * The object-store port. Every object has a `.meta.json` sidecar beside it holding its
 * size, content type, SHA-256, creation time and the pipeline metadata it was written with
 * (execution_id, stage, route_id, correlation_id, ...). Listings return objects, never sidecars.
 */
import type { Readable } from 'node:stream';

export interface ObjectInfo {
  key: string;
  size: number;
  content_type: string;
  sha256: string;
  created_at: string;
  /** Pipeline context given at write time. */
  metadata: Record<string, unknown>;
}

export interface PutOptions {
  contentType?: string;
  metadata?: Record<string, unknown>;
}

export interface ListOptions {
  prefix?: string;
  /** Group keys sharing the text up to the next delimiter after the prefix (typically `/`). */
  delimiter?: string;
  /** Keys strictly after this one (pagination). */
  startAfter?: string;
  limit?: number;
}

export interface ListResult {
  /** Sorted by key. */
  objects: ObjectInfo[];
  /** Sorted; each ends with the delimiter. */
  commonPrefixes: string[];
  /** True when `limit` cut the listing short. */
  truncated: boolean;
}

export interface ByteRange {
  start: number;
  /** Inclusive, as in an HTTP Range header. */
  end: number;
}

export interface ObjectStore {
  readonly kind: string;
  /** Where the objects are (a directory, s3://bucket/prefix): health with debug=true. */
  readonly location: string;
  put(key: string, body: Uint8Array | string, options?: PutOptions): Promise<ObjectInfo>;
  /** Whole body; throws object_not_found. */
  get(key: string): Promise<Buffer>;
  /** Undefined when there is no such object. */
  stat(key: string): Promise<ObjectInfo | undefined>;
  list(options?: ListOptions): Promise<ListResult>;
  /** Body as a stream, optionally a byte range; throws object_not_found. */
  stream(key: string, range?: ByteRange): Promise<Readable>;
  /** Removes the object and its sidecar; false when there was none. */
  delete(key: string): Promise<boolean>;
  /** Throws when the store cannot be read and written (health check). */
  check(): Promise<void>;
}
