/**
 * S3 object store (`STORAGE_URL=s3://bucket/prefix`), for AWS S3 and S3-compatible servers
 * (path-style addressing for those). Same contract as the filesystem store: the same key
 * rules (keys.ts), a `<key>.meta.json` sidecar object beside each object, listings that never
 * show sidecars, byte ranges and streaming.
 *
 * S3 has no rename, so an object and its sidecar are two PUTs: the object first, then the
 * sidecar, as the filesystem store does; an object whose sidecar is missing (a crash between
 * the two, or an object uploaded by other means) is described from its own headers.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { AppError } from '../errors.js';
import { assertValidKey, assertValidPrefix, isSidecarKey, SIDECAR_SUFFIX } from './keys.js';
import type {
  ByteRange,
  ListOptions,
  ListResult,
  ObjectInfo,
  ObjectStore,
  PutOptions,
} from './object-store.js';

const DEFAULT_CONTENT_TYPE = 'application/octet-stream';
/** Sidecars read at once while listing. */
const SIDECAR_READS = 16;
const HEALTH_PROBE = '.health-';

export interface S3Location {
  bucket: string;
  /** '' or a key prefix ending in `/`. */
  prefix: string;
}

export interface S3Options {
  endpoint?: string;
  region?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Path-style URLs (`<endpoint>/<bucket>/<key>`); default: on when an endpoint is given. */
  forcePathStyle?: boolean;
}

/** `s3://bucket/some/prefix` -> `{bucket, prefix: 'some/prefix/'}`; throws on anything else. */
export function parseS3Url(url: string): S3Location {
  const match = /^s3:\/\/([^/?#]+)(?:\/([^?#]*))?$/.exec(url.trim());
  if (!match?.[1]) throw new Error(`STORAGE_URL ${JSON.stringify(url)} is not s3://bucket[/prefix]`);
  const bucket = match[1];
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    throw new Error(`STORAGE_URL names an invalid bucket ${JSON.stringify(bucket)}`);
  const trimmed = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (trimmed) assertValidPrefix(`${trimmed}/`);
  return { bucket, prefix: trimmed ? `${trimmed}/` : '' };
}

export function createS3Client(options: S3Options): S3Client {
  const config: S3ClientConfig = {
    region: options.region ?? 'us-east-1',
    forcePathStyle: options.forcePathStyle ?? options.endpoint !== undefined,
    // Fail over to the caller (a 503) rather than retrying for long inside one request.
    maxAttempts: 3,
  };
  if (options.endpoint) config.endpoint = options.endpoint;
  if (options.accessKeyId && options.secretAccessKey)
    config.credentials = { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey };
  return new S3Client(config);
}

/** What the store's module-level functions need: the client, the bucket, and the key prefix. */
interface S3Access {
  client: S3Client;
  bucket: string;
  /** The object key of a store key (the location's prefix added). */
  full: (key: string) => string;
  /** The store key of an object key (the prefix taken off). */
  relative: (key: string) => string;
  clock: () => Date;
}

export function createS3ObjectStore(
  client: S3Client,
  location: S3Location,
  clock: () => Date = () => new Date(),
): ObjectStore {
  const { bucket, prefix: base } = location;
  const full = (key: string) => `${base}${key}`;
  const relative = (key: string) => key.slice(base.length);
  const s3: S3Access = { client, bucket, full, relative, clock };

  return {
    kind: 's3',
    location: `s3://${bucket}/${base}`,

    async put(key: string, body: Uint8Array | string, options: PutOptions = {}): Promise<ObjectInfo> {
      assertValidKey(key);
      const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
      const info: ObjectInfo = {
        key,
        size: bytes.byteLength,
        content_type: options.contentType ?? DEFAULT_CONTENT_TYPE,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        created_at: clock().toISOString(),
        metadata: options.metadata ?? {},
      };
      await call(`write ${key}`, () =>
        client.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: full(key),
            Body: bytes,
            ContentType: info.content_type,
          }),
        ),
      );
      await call(`write ${key}${SIDECAR_SUFFIX}`, () =>
        client.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: full(`${key}${SIDECAR_SUFFIX}`),
            Body: JSON.stringify(info),
            ContentType: 'application/json',
          }),
        ),
      );
      return info;
    },

    async get(key: string): Promise<Buffer> {
      assertValidKey(key);
      return getBody(s3, key);
    },

    async stat(key: string): Promise<ObjectInfo | undefined> {
      assertValidKey(key);
      return readSidecar(s3, key);
    },

    list: (options: ListOptions = {}) => listObjects(s3, options),

    async stream(key: string, range?: ByteRange): Promise<Readable> {
      assertValidKey(key);
      const body = await call(`read ${key}`, async () => {
        const answer = await client.send(
          new GetObjectCommand({
            Bucket: bucket,
            Key: full(key),
            ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
          }),
        );
        return answer.Body;
      });
      if (!body) throw objectNotFound(key);
      return body instanceof Readable ? body : Readable.fromWeb(body.transformToWebStream() as never);
    },

    async delete(key: string): Promise<boolean> {
      assertValidKey(key);
      const head = await call(`stat ${key}`, () =>
        client.send(new HeadObjectCommand({ Bucket: bucket, Key: full(key) })),
      );
      await call(`delete ${key}`, () =>
        client.send(
          new DeleteObjectsCommand({
            Bucket: bucket,
            Delete: { Objects: [{ Key: full(key) }, { Key: full(`${key}${SIDECAR_SUFFIX}`) }], Quiet: true },
          }),
        ),
      );
      return head !== undefined;
    },

    async check(): Promise<void> {
      const exists = await call('reach the bucket', () =>
        client.send(new HeadBucketCommand({ Bucket: bucket })),
      );
      if (!exists) throw unavailable('reach the bucket', new Error(`bucket ${bucket} does not exist`));
      const probe = full(`${HEALTH_PROBE}${randomBytes(4).toString('hex')}`);
      await call('write a probe', () =>
        client.send(new PutObjectCommand({ Bucket: bucket, Key: probe, Body: 'ok' })),
      );
      await call('delete a probe', () =>
        client.send(
          new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key: probe }], Quiet: true } }),
        ),
      );
    },
  };
}

/** Reads the infos of `keys` a few at a time, keeping their order; vanished keys drop out. */
async function statAll(
  keys: readonly string[],
  read: (key: string) => Promise<ObjectInfo | undefined>,
): Promise<ObjectInfo[]> {
  const infos: (ObjectInfo | undefined)[] = new Array(keys.length);
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const index = next++;
      infos[index] = await read(keys[index] as string);
    }
  };
  await Promise.all(Array.from({ length: Math.min(SIDECAR_READS, keys.length) }, worker));
  return infos.filter((info): info is ObjectInfo => info !== undefined);
}

function isHealthProbe(name: string): boolean {
  return name.startsWith(HEALTH_PROBE) && !name.includes('/');
}

function isNotFound(error: unknown): boolean {
  if (!(error instanceof S3ServiceException) || error.name === 'NoSuchBucket') return false;
  return error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata?.httpStatusCode === 404;
}

function objectNotFound(key: string): AppError {
  return new AppError('object_not_found', `object ${JSON.stringify(key)} not found`);
}

function unavailable(what: string, error: unknown): AppError {
  const reason = error instanceof Error ? error.message || error.name : String(error);
  return new AppError('storage_unavailable', `object storage (S3) could not ${what}: ${reason}`, {
    cause: error,
  });
}

/** The S3 store named by the `storage_url` and `s3_*` settings. */
export function createS3ObjectStoreFromSettings(settings: {
  storage_url?: string | undefined;
  s3_endpoint?: string | undefined;
  s3_region: string;
  s3_access_key_id?: string | undefined;
  s3_secret_access_key?: string | undefined;
  s3_force_path_style?: boolean | undefined;
}): ObjectStore {
  const location = parseS3Url(settings.storage_url ?? '');
  if ((settings.s3_access_key_id === undefined) !== (settings.s3_secret_access_key === undefined))
    throw new Error('set both WEIR_S3_ACCESS_KEY_ID and WEIR_S3_SECRET_ACCESS_KEY, or neither');
  const client = createS3Client({
    ...(settings.s3_endpoint ? { endpoint: settings.s3_endpoint } : {}),
    region: settings.s3_region,
    ...(settings.s3_access_key_id ? { accessKeyId: settings.s3_access_key_id } : {}),
    ...(settings.s3_secret_access_key ? { secretAccessKey: settings.s3_secret_access_key } : {}),
    ...(settings.s3_force_path_style !== undefined ? { forcePathStyle: settings.s3_force_path_style } : {}),
  });
  return createS3ObjectStore(client, location);
}

async function readSidecar(s3: S3Access, key: string): Promise<ObjectInfo | undefined> {
  const sidecar = await call(`read ${key}${SIDECAR_SUFFIX}`, async () => {
    const answer = await s3.client.send(
      new GetObjectCommand({ Bucket: s3.bucket, Key: s3.full(`${key}${SIDECAR_SUFFIX}`) }),
    );
    return answer.Body?.transformToString('utf8');
  });
  if (sidecar !== undefined) {
    try {
      return { ...(JSON.parse(sidecar) as ObjectInfo), key };
    } catch {
      // An unreadable sidecar: fall through and describe the object itself.
    }
  }
  const head = await call(`stat ${key}`, () =>
    s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: s3.full(key) })),
  );
  if (!head) return undefined;
  const body = await getBody(s3, key);
  return {
    key,
    size: head.ContentLength ?? body.length,
    content_type: head.ContentType ?? DEFAULT_CONTENT_TYPE,
    sha256: createHash('sha256').update(body).digest('hex'),
    created_at: (head.LastModified ?? s3.clock()).toISOString(),
    metadata: {},
  };
}

async function getBody(s3: S3Access, key: string): Promise<Buffer> {
  const bytes = await call(`read ${key}`, async () => {
    const answer = await s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: s3.full(key) }));
    return answer.Body?.transformToByteArray();
  });
  if (!bytes) throw objectNotFound(key);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Runs one S3 call, turning "not there" into undefined and anything else into a 503. */
async function call<T>(what: string, operation: () => Promise<T>): Promise<T | undefined> {
  try {
    return await operation();
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw unavailable(what, error);
  }
}

/**
 * One listing of the store: S3 pages read until `limit` real entries (no sidecars, no health
 * probes) are found or the listing ends.
 */
async function listObjects(s3: S3Access, options: ListOptions): Promise<ListResult> {
  const prefix = options.prefix ?? '';
  assertValidPrefix(prefix);
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const delimiter = options.delimiter;
  const keys: string[] = [];
  const commonPrefixes: string[] = [];
  let truncated = false;
  let token: string | undefined;
  // Sidecars and skipped entries count against S3's page size, so read pages until the
  // limit is filled with real entries or the listing ends.
  page: do {
    const answer = await call(`list ${prefix}`, () =>
      s3.client.send(
        new ListObjectsV2Command({
          Bucket: s3.bucket,
          Prefix: s3.full(prefix),
          ...(delimiter ? { Delimiter: delimiter } : {}),
          ...(options.startAfter !== undefined && !token ? { StartAfter: s3.full(options.startAfter) } : {}),
          ...(token ? { ContinuationToken: token } : {}),
          MaxKeys: 1000,
        }),
      ),
    );
    if (!answer) throw unavailable(`list ${prefix}`, new Error(`bucket ${s3.bucket} does not exist`));
    // S3 returns keys and common prefixes as two sorted lists; merge them in key order.
    const entries = [
      ...(answer.Contents ?? []).map((object) => ({ name: s3.relative(object.Key ?? ''), folder: false })),
      ...(answer.CommonPrefixes ?? []).map((common) => ({
        name: s3.relative(common.Prefix ?? ''),
        folder: true,
      })),
    ].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (!entry.folder && (isSidecarKey(entry.name) || isHealthProbe(entry.name))) continue;
      if (options.startAfter !== undefined && entry.name <= options.startAfter) continue;
      if (keys.length + commonPrefixes.length >= limit) {
        truncated = true;
        break page;
      }
      (entry.folder ? commonPrefixes : keys).push(entry.name);
    }
    token = answer.IsTruncated ? answer.NextContinuationToken : undefined;
  } while (token);
  return { objects: await statAll(keys, (key) => readSidecar(s3, key)), commonPrefixes, truncated };
}
