/**
 * Signs batches of deliveries on a thread of its own. The two HMACs of a delivery were the
 * largest share of the dispatcher's work on the service thread (bench:webhooks with signing
 * skipped ran 15 % faster), and the service thread is the one the whole pipeline waits on. A
 * batch of journalled deliveries is signed here while it waits for free slots; a delivery sent
 * before its signatures are back is signed on the service thread as before. The thread starts
 * on the first batch (again after `close()`); if it fails, signing stays on the service thread.
 */
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../runtime/module-worker.js';

export interface SignRequest {
  id: number;
  /** Signing time (webhook-timestamp), Unix seconds. */
  seconds: number;
  ids: string[];
  secrets: string[];
  /** Index into `secrets`, per delivery. */
  secretOf: number[];
  /** Byte length of each body in `bodies`, in order. */
  lengths: number[];
  bodies: Uint8Array;
}

export interface SignReply {
  id: number;
  /** X-Svc-Signature then webhook-signature, per delivery. */
  signatures: string[];
}

/** Named as a journalled delivery's fields, so those are signed as they are (no copy each). */
export interface DeliveryToSign {
  delivery_id: string;
  secret: string;
  body: Uint8Array;
}

/** Both signatures of a delivery, made for `seconds`. */
export interface Signatures {
  svc: string;
  standard: string;
  seconds: number;
  /** The secret they were made with. */
  secret: string;
}

export interface Signer {
  /** Signs the deliveries for `seconds`; undefined when the signing thread is not available. */
  sign(deliveries: readonly DeliveryToSign[], seconds: number): Promise<Signatures[] | undefined>;
  close(): void;
}

export function createSigner(onError: (error: unknown) => void = () => {}): Signer {
  let worker: Worker | undefined;
  let failed = false;
  let nextId = 1;
  const waiting = new Map<number, (signatures: string[] | undefined) => void>();

  function start(): Worker | undefined {
    if (failed) return undefined;
    if (worker) return worker;
    try {
      const started = startModuleWorker('webhooks/signing-worker');
      started.on('message', (reply: SignReply) => {
        const resolve = waiting.get(reply.id);
        waiting.delete(reply.id);
        resolve?.(reply.signatures);
      });
      // Only the current thread's end counts (a closed one's exit is expected).
      started.on('error', (error) => {
        if (worker === started) giveUp(error);
      });
      started.on('exit', (code) => {
        if (worker === started) giveUp(new Error(`the signing thread exited (code ${code})`));
      });
      // After the listeners: a 'message' listener refs the worker's port again.
      started.unref();
      worker = started;
      return worker;
    } catch (error) {
      giveUp(error);
      return undefined;
    }
  }

  /** Signing stays on the service thread from now on. */
  function giveUp(error: unknown): void {
    if (!failed) onError(error);
    failed = true;
    worker = undefined;
    answerAll(undefined);
  }

  function answerAll(signatures: undefined): void {
    for (const resolve of waiting.values()) resolve(signatures);
    waiting.clear();
  }

  return {
    async sign(deliveries, seconds) {
      const thread = start();
      if (!thread || deliveries.length === 0) return undefined;
      const secrets: string[] = [];
      const secretIndex = new Map<string, number>();
      const request: SignRequest = {
        id: nextId++,
        seconds,
        ids: new Array(deliveries.length),
        secrets,
        secretOf: new Array(deliveries.length),
        lengths: new Array(deliveries.length),
        bodies: Buffer.concat(deliveries.map((delivery) => delivery.body)),
      };
      deliveries.forEach((delivery, index) => {
        let secret = secretIndex.get(delivery.secret);
        if (secret === undefined) {
          secret = secrets.push(delivery.secret) - 1;
          secretIndex.set(delivery.secret, secret);
        }
        request.ids[index] = delivery.delivery_id;
        request.secretOf[index] = secret;
        request.lengths[index] = delivery.body.byteLength;
      });
      const signatures = await new Promise<string[] | undefined>((resolve) => {
        waiting.set(request.id, resolve);
        // The joined bodies are this request's own: moved, not copied (unless a slice of
        // Node's shared pool, as a small Buffer is).
        const { bodies } = request;
        const own = bodies.byteOffset === 0 && bodies.byteLength === bodies.buffer.byteLength;
        thread.postMessage(request, own ? [bodies.buffer as ArrayBuffer] : []);
      });
      if (!signatures) return undefined;
      // The secret each was signed with, as sent to the thread: a delivery's own secret may
      // have changed meanwhile (its subscription's did), and then these signatures are stale.
      return request.secretOf.map((secret, index) => ({
        svc: signatures[2 * index] as string,
        standard: signatures[2 * index + 1] as string,
        seconds,
        secret: secrets[secret] as string,
      }));
    },
    close() {
      // A later batch starts a new thread.
      const stopping = worker;
      worker = undefined;
      answerAll(undefined);
      void stopping?.terminate();
    },
  };
}
