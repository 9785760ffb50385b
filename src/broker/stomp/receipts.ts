/**
 * Frames sent with a `receipt` header wait here for the broker's RECEIPT naming them. A wait
 * also ends on an ERROR frame naming the receipt, on the loss of the connection (the broker may
 * or may not have taken the frame), or at its time limit.
 */
import { randomUUID } from 'node:crypto';
import { deadlinesOf } from '../../runtime/deadlines.js';
import { type Frame, stompErrorMessage } from './frames.js';

export interface ReceiptWaiters {
  /**
   * Sends through `send(receipt)` with a fresh receipt id; resolves on its RECEIPT, rejects on
   * an ERROR naming it, on `connectionLost`, or when no RECEIPT came within `timeoutMs`.
   */
  send(send: (receipt: string) => void, what: string, timeoutMs: number): Promise<void>;
  /**
   * For DISCONNECT, where closing goes on regardless: resolves on the RECEIPT, on the loss of the
   * connection, or after `graceMs`, whichever comes first; never rejects.
   */
  sendAndWaitAtMost(send: (receipt: string) => void, graceMs: number): Promise<void>;
  /** A RECEIPT settles its waiter; an ERROR naming a receipt fails it. Other frames are ignored. */
  onFrame(frame: Frame): void;
  /** Fails every waiter: their frames were on a connection now gone. */
  connectionLost(): void;
}

export function createReceiptWaiters(): ReceiptWaiters {
  const waiting = new Map<string, { resolve: () => void; reject: (error: Error) => void }>();
  return {
    send(send, what, timeoutMs) {
      const receipt = randomUUID();
      return new Promise<void>((resolve, reject) => {
        // One timer for all sends of this length (every message published waits here).
        const deadline = deadlinesOf(timeoutMs).set(() => {
          waiting.delete(receipt);
          reject(new Error(`no RECEIPT for ${what} within ${timeoutMs} ms`));
        });
        waiting.set(receipt, {
          resolve: () => {
            deadline.cancel();
            resolve();
          },
          reject: (error) => {
            deadline.cancel();
            reject(error);
          },
        });
        // A write that throws (socket gone) fails now, and takes its timer and entry with it
        // instead of leaving them for the timeout.
        try {
          send(receipt);
        } catch (error) {
          waiting.get(receipt)?.reject(error as Error);
          waiting.delete(receipt);
        }
      });
    },

    sendAndWaitAtMost(send, graceMs) {
      const receipt = randomUUID();
      const done = new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          waiting.delete(receipt);
          resolve();
        }, graceMs).unref();
        const settle = () => {
          clearTimeout(timer);
          resolve();
        };
        waiting.set(receipt, { resolve: settle, reject: settle });
      });
      try {
        send(receipt);
      } catch {
        // Best effort by contract: a write that fails settles the wait at once.
        waiting.get(receipt)?.resolve();
        waiting.delete(receipt);
      }
      return done;
    },

    onFrame(frame) {
      if (frame.command === 'RECEIPT') {
        const id = frame.headers['receipt-id'] ?? '';
        waiting.get(id)?.resolve();
        waiting.delete(id);
      } else if (frame.command === 'ERROR') {
        const id = frame.headers['receipt-id'];
        if (id) {
          waiting.get(id)?.reject(new Error(`STOMP error: ${stompErrorMessage(frame)}`));
          waiting.delete(id);
        }
      }
    },

    connectionLost() {
      for (const pending of waiting.values()) pending.reject(new Error('STOMP connection lost'));
      waiting.clear();
    },
  };
}
