/**
 * What the parts of the webhook dispatcher (dispatcher.ts) share: the journalled deliveries
 * waiting in memory for a slot, the attempts under way, and whether it runs. Recording fills
 * `ready`, launching empties it and counts `inFlight`, the result writers linger on both.
 */
import type { EventToRecord, FirstResult } from '../db/webhooks-repository.js';
import { createFifo, type Fifo } from './fifo.js';
import type { Signatures } from './signer.js';

/** One journal row's deliveries, as this dispatcher holds them. */
export interface JournalLease {
  batchId: string;
  /** Lease end on the schedule clock (ms). */
  until: number;
  /** Deliveries of the batch; `handedOver` counts those given to the first-results writer. */
  size: number;
  handedOver: number;
  /** A write of one of its deliveries failed: the journal row is left to run out and be expanded. */
  broken: boolean;
}

/** An event to record, its body encoded once (journal, row and POST use the bytes). */
export type RecordedEvent = EventToRecord & { body: Buffer };

/** A journalled delivery waiting in memory for a slot. */
export interface Journalled {
  lease: JournalLease;
  delivery_id: string;
  webhook_id: string;
  url: string;
  secret: string;
  event_id: string;
  event_type: string;
  /** UTF-8 bytes, encoded once for the journal, the row and the POST. */
  body: Uint8Array;
  created_at: Date;
  /** The subscriptions' version it was matched with. */
  version: number;
  /** Its signatures, once the signing thread has made them. */
  signed?: Signatures | undefined;
}

/** A journalled delivery's first row, and the lease it belongs to. */
export interface FirstWrite {
  lease: JournalLease;
  record: FirstResult;
}

export interface DispatchState {
  /** Journalled deliveries waiting in memory for a slot. */
  readonly ready: Fifo<Journalled>;
  /** Attempts under way. */
  inFlight: number;
  /** The timer runs (start() was called and stop() was not since). */
  started: boolean;
  /** stop() was called. */
  stopped: boolean;
}

export function createDispatchState(): DispatchState {
  return { ready: createFifo<Journalled>(), inFlight: 0, started: false, stopped: false };
}
