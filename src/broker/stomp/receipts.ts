/**
 * Frames sent with a `receipt` header wait here for the broker's RECEIPT naming them. A wait
 * also ends on an ERROR frame naming the receipt, on the loss of the connection (the broker may
 * or may not have taken the frame), or at its time limit.
 */
import { type Deadline, deadlinesOf } from '../../runtime/deadlines.js';
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

interface Waiter {
  resolve(): void;
  reject(error: Error): void;
  /** The send's time limit; none for DISCONNECT's wait, which keeps a timer of its own. */
  deadline: Deadline | undefined;
}

export function createReceiptWaiters(): ReceiptWaiters {
  const waiting = new Map<string, Waiter>();
  // Receipt ids need only be unique on a connection: a counter, not a UUID per message sent
  // (shorter frames both ways, no random bytes). It never restarts, so an id is never reused.
  let sequence = 0;
  const nextReceipt = () => `r${(++sequence).toString(36)}`;
  return {
    send(send, what, timeoutMs) {
      const receipt = nextReceipt();
      return new Promise<void>((resolve, reject) => {
        const waiter: Waiter = { resolve, reject, deadline: undefined };
        // One timer for all sends of this length (every message published waits here).
        waiter.deadline = deadlinesOf(timeoutMs).set(() => {
          waiting.delete(receipt);
          reject(new Error(`no RECEIPT for ${what} within ${timeoutMs} ms`));
        });
        waiting.set(receipt, waiter);
        // A write that throws (socket gone) fails now, and takes its timer and entry with it
        // instead of leaving them for the timeout.
        try {
          send(receipt);
        } catch (error) {
          settle(receipt)?.reject(error as Error);
        }
      });
    },

    sendAndWaitAtMost(send, graceMs) {
      const receipt = nextReceipt();
      const done = new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          waiting.delete(receipt);
          resolve();
        }, graceMs).unref();
        const finish = () => {
          clearTimeout(timer);
          resolve();
        };
        waiting.set(receipt, { resolve: finish, reject: finish, deadline: undefined });
      });
      try {
        send(receipt);
      } catch {
        // Best effort by contract: a write that fails settles the wait at once.
        settle(receipt)?.resolve();
      }
      return done;
    },

    onFrame(frame) {
      if (frame.command === 'RECEIPT') {
        settle(frame.headers['receipt-id'] ?? '')?.resolve();
      } else if (frame.command === 'ERROR') {
        const id = frame.headers['receipt-id'];
        if (id) settle(id)?.reject(new Error(`STOMP error: ${stompErrorMessage(frame)}`));
      }
    },

    connectionLost() {
      const lost = [...waiting.values()];
      waiting.clear();
      for (const waiter of lost) {
        waiter.deadline?.cancel();
        waiter.reject(new Error('STOMP connection lost'));
      }
    },
  };

  /** Takes the waiter for `receipt` out of the map, its deadline cancelled. */
  function settle(receipt: string): Waiter | undefined {
    const waiter = waiting.get(receipt);
    if (!waiter) return undefined;
    waiting.delete(receipt);
    waiter.deadline?.cancel();
    return waiter;
  }
}
