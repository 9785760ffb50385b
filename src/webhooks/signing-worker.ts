/**
 * The signing thread (see signer.ts): signs batches of deliveries both ways with the same
 * functions the service thread uses.
 */
import { parentPort } from 'node:worker_threads';
import type { SignReply, SignRequest } from './signer.js';
import { standardWebhookSignature, svcSignature } from './signing.js';

const port = parentPort;
if (!port) throw new Error('signing-worker.ts runs as a worker thread only');

port.on('message', (request: SignRequest) => {
  const signatures: string[] = new Array(request.ids.length * 2);
  let offset = 0;
  for (let index = 0; index < request.ids.length; index++) {
    const length = request.lengths[index] as number;
    const body = request.bodies.subarray(offset, offset + length);
    offset += length;
    const secret = request.secrets[request.secretOf[index] as number] as string;
    signatures[2 * index] = svcSignature(secret, body);
    signatures[2 * index + 1] = standardWebhookSignature(
      secret,
      request.ids[index] as string,
      request.seconds,
      body,
    );
  }
  port.postMessage({ id: request.id, signatures } satisfies SignReply);
});
