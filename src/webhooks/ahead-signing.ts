/**
 * Signing journalled deliveries ahead, while they wait for slots: big batches go to the
 * signing thread (signer.ts), and signatures made ahead serve only while fresh and made with
 * the secret the delivery is sent with (its subscription's secret may have changed meanwhile).
 */
import type { Journalled } from './dispatch-state.js';
import type { Signer } from './signer.js';

/** Journalled batches this big or bigger are signed on the signing thread (signer.ts). */
export const SIGN_IN_THREAD_FROM = 32;
/** How old signatures made ahead may be when the delivery goes out (webhook-timestamp). */
export const SIGNED_MAX_AGE_S = 30;

/** Has the signing thread sign a batch while it waits for slots (small batches are left to the sender). */
export function signAhead(
  signer: Signer,
  items: Journalled[],
  wallClock: () => Date,
  onError: (error: unknown, message: string) => void,
): void {
  if (items.length < SIGN_IN_THREAD_FROM) return;
  const seconds = Math.floor(wallClock().getTime() / 1000);
  signer.sign(items, seconds).then(
    (signatures) => {
      if (!signatures) return;
      for (let index = 0; index < items.length; index++)
        (items[index] as Journalled).signed = signatures[index];
    },
    (error) => onError(error, 'webhook signing thread failed: signing on the service thread'),
  );
}

/**
 * Drops `item`'s signatures made ahead when they are stale at `wallSeconds` (the signing clock
 * in Unix seconds) or made with another secret.
 */
export function dropStaleSignatures(item: Journalled, wallSeconds: number): void {
  const signed = item.signed;
  if (signed && (signed.secret !== item.secret || wallSeconds - signed.seconds > SIGNED_MAX_AGE_S))
    item.signed = undefined;
}
