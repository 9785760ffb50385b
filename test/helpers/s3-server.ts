/**
 * A real S3-compatible server for tests: s3rver (the S3 REST API in Node, objects on disk) in a
 * child process on 127.0.0.1, with one empty bucket, started by s3rver-launcher.cjs (which
 * fixes one listing bug of s3rver, explained there). s3rver checks the access key id but not
 * the SigV4 signature itself.
 *
 * It runs with --openssl-legacy-provider because s3rver encrypts ListObjectsV2 continuation
 * tokens with DES, which OpenSSL 3 only offers through its legacy provider; without it every
 * listing longer than one page answers 500.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface TestS3Server {
  endpoint: string;
  bucket: string;
  /** s3rver's fixed credentials. */
  accessKeyId: string;
  secretAccessKey: string;
  close(): Promise<void>;
}

export async function startS3Server(bucket = 'weir-test'): Promise<TestS3Server> {
  const directory = await mkdtemp(path.join(tmpdir(), 'weir-s3rver-'));
  const launcher = fileURLToPath(new URL('./s3rver-launcher.cjs', import.meta.url));
  const child = spawn(process.execPath, ['--openssl-legacy-provider', launcher, directory, bucket], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let port: number;
  try {
    port = await listeningPort(child);
  } catch (error) {
    child.kill('SIGKILL');
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(directory, { recursive: true, force: true });
    },
  };
}

function listeningPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`s3rver did not start within 15 s: ${output}`)), 15_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on [\d.]+:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`s3rver exited with ${code}: ${output}`));
    });
  });
}
