/**
 * The S3 store against a real S3-compatible server (s3rver, started on loopback by the test):
 * the shared conformance suite, then what is particular to S3.
 */
import { randomBytes } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3Server, type TestS3Server } from '../../test/helpers/s3-server.js';
import { loadSettings, SettingsError, sanitizeSettings } from '../settings.js';
import { describeObjectStoreConformance } from './object-store.conformance.js';
import { createS3Client, createS3ObjectStore, createS3ObjectStoreFromSettings, parseS3Url } from './s3.js';

let server: TestS3Server | undefined;
let starting: Promise<TestS3Server> | undefined;
const running = () => {
  starting ??= startS3Server().then((started) => {
    server = started;
    return started;
  });
  return starting;
};
afterAll(async () => {
  await server?.close();
});

async function clientFor(options: { accessKeyId?: string } = {}) {
  const s3 = await running();
  return createS3Client({
    endpoint: s3.endpoint,
    accessKeyId: options.accessKeyId ?? s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
  });
}

/** A store on a fresh prefix of the test bucket, so tests never see each other's objects. */
async function temporaryStore(options: { accessKeyId?: string } = {}) {
  const s3 = await running();
  const client = await clientFor(options);
  const prefix = `run-${randomBytes(6).toString('hex')}/`;
  return {
    client,
    prefix,
    bucket: s3.bucket,
    store: createS3ObjectStore(client, { bucket: s3.bucket, prefix }),
    dispose: async () => client.destroy(),
  };
}

describeObjectStoreConformance('s3 (s3rver)', temporaryStore);

describe('S3 object store specifics', () => {
  beforeAll(async () => {
    await running();
  }, 30_000);

  it('writes the sidecar as a <key>.meta.json object beside the object, under the prefix', async () => {
    const { client, bucket, prefix, store, dispose } = await temporaryStore();
    await store.put('e/s/page.md', '# Title', { contentType: 'text/markdown', metadata: { stage: 's' } });
    const raw = await client.send(
      new GetObjectCommand({ Bucket: bucket, Key: `${prefix}e/s/page.md.meta.json` }),
    );
    expect(JSON.parse(await (raw.Body?.transformToString() ?? ''))).toMatchObject({
      key: 'e/s/page.md',
      size: 7,
      content_type: 'text/markdown',
      metadata: { stage: 's' },
    });
    const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: `${prefix}e/s/page.md` }));
    expect(object.ContentType).toBe('text/markdown');
    await dispose();
  });

  it('describes an object uploaded without a sidecar from the object itself', async () => {
    const { client, bucket, prefix, store, dispose } = await temporaryStore();
    await client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: `${prefix}by-hand.txt`,
        Body: 'abc',
        ContentType: 'text/plain',
      }),
    );
    expect(await store.stat('by-hand.txt')).toMatchObject({
      key: 'by-hand.txt',
      size: 3,
      content_type: 'text/plain',
      sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
      metadata: {},
    });
    expect((await store.list()).objects.map((object) => object.key)).toEqual(['by-hand.txt']);
    await dispose();
  });

  it('lists past one S3 page (1,000 keys, sidecars included) in key order', async () => {
    const { store, dispose } = await temporaryStore();
    const keys = Array.from({ length: 520 }, (_, index) => `many/${String(index).padStart(4, '0')}.txt`);
    for (let start = 0; start < keys.length; start += 40)
      await Promise.all(keys.slice(start, start + 40).map((key) => store.put(key, key)));
    const all = await store.list({ prefix: 'many/' });
    expect(all.objects.map((object) => object.key)).toEqual(keys);
    expect(all.truncated).toBe(false);
    const page = await store.list({ prefix: 'many/', startAfter: 'many/0499.txt', limit: 10 });
    expect(page.objects.map((object) => object.key)).toEqual(keys.slice(500, 510));
    expect(page.truncated).toBe(true);
    await dispose();
  }, 60_000);

  it('keeps stores on different prefixes apart', async () => {
    const first = await temporaryStore();
    const second = await temporaryStore();
    await first.store.put('same/key.txt', 'first');
    expect(await second.store.stat('same/key.txt')).toBeUndefined();
    expect((await second.store.list()).objects).toEqual([]);
    await Promise.all([first.dispose(), second.dispose()]);
  });

  it('answers 503 storage_unavailable when the server refuses the credentials', async () => {
    // s3rver checks the access key id (it does not verify SigV4 signatures themselves).
    const { store, dispose } = await temporaryStore({ accessKeyId: 'UNKNOWNKEY' });
    await expect(store.put('a.txt', 'x')).rejects.toMatchObject({ code: 'storage_unavailable', status: 503 });
    await expect(store.check()).rejects.toMatchObject({ code: 'storage_unavailable' });
    await dispose();
  });

  it('fails its health check for a missing bucket and for a server that is down', async () => {
    const client = await clientFor();
    const missing = createS3ObjectStore(client, { bucket: 'no-such-bucket', prefix: '' });
    await expect(missing.check()).rejects.toThrow(/bucket no-such-bucket does not exist/);
    await expect(missing.list()).rejects.toMatchObject({ code: 'storage_unavailable' });
    const down = createS3ObjectStore(
      createS3Client({ endpoint: 'http://127.0.0.1:9', accessKeyId: 'x', secretAccessKey: 'y' }),
      { bucket: 'weir-test', prefix: '' },
    );
    await expect(down.check()).rejects.toMatchObject({ code: 'storage_unavailable', status: 503 });
    client.destroy();
  });
});

describe('parseS3Url', () => {
  it('reads the bucket and a prefix ending in /', () => {
    expect(parseS3Url('s3://weir-data')).toEqual({ bucket: 'weir-data', prefix: '' });
    expect(parseS3Url('s3://weir-data/')).toEqual({ bucket: 'weir-data', prefix: '' });
    expect(parseS3Url('s3://weir-data/prod/objects/')).toEqual({
      bucket: 'weir-data',
      prefix: 'prod/objects/',
    });
  });

  it.each([
    ['http://bucket/x'],
    ['s3://'],
    ['s3://Bad_Bucket/x'],
    ['s3://bucket/../x'],
    ['s3://bucket/a//b'],
  ])('refuses %j', (url) => {
    expect(() => parseS3Url(url)).toThrow();
  });
});

describe('S3 settings', () => {
  it('reads the WEIR_S3_* variables and hides the credentials in the sanitized config', () => {
    const settings = loadSettings({
      STORAGE_URL: 's3://weir-data/prod',
      WEIR_S3_ENDPOINT: 'http://127.0.0.1:9000',
      WEIR_S3_REGION: 'eu-north-1',
      WEIR_S3_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      WEIR_S3_SECRET_ACCESS_KEY: 'very-secret',
      WEIR_S3_FORCE_PATH_STYLE: 'false',
    });
    expect(settings).toMatchObject({ s3_region: 'eu-north-1', s3_force_path_style: false });
    expect(sanitizeSettings(settings)).toMatchObject({
      storage_url: 's3://weir-data/prod',
      s3_endpoint: 'http://127.0.0.1:9000',
      s3_access_key_id: '********',
      s3_secret_access_key: '********',
    });
    expect(createS3ObjectStoreFromSettings(settings).kind).toBe('s3');
    expect(() => loadSettings({ WEIR_S3_FORCE_PATH_STYLE: 'maybe' })).toThrow(SettingsError);
  });

  it('refuses half a credential pair and a malformed STORAGE_URL', () => {
    const halfKey = loadSettings({ STORAGE_URL: 's3://weir-data', WEIR_S3_ACCESS_KEY_ID: 'AKIAEXAMPLE' });
    expect(() => createS3ObjectStoreFromSettings(halfKey)).toThrow(/set both WEIR_S3_ACCESS_KEY_ID/);
    expect(() => createS3ObjectStoreFromSettings(loadSettings({ STORAGE_URL: 'minio://x' }))).toThrow(
      /is not s3:\/\/bucket/,
    );
  });
});
