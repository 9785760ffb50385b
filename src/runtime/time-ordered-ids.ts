/**
 * New ids for rows (executions, configs, webhook deliveries and events): UUIDv7 from the
 * uuidv7 library, with its random bits drawn from a pool of 2,048 words refilled by
 * randomFillSync. The library's default refills eight words at a time through webcrypto's
 * getRandomValues, about 3 µs a call on Node 20: bench:webhooks spent 4 µs of the service
 * thread's 90 µs a delivery there (two ids each). The bits are as strong (the same CSPRNG);
 * only fewer calls fetch them. Ids are not secrets: they are names, ordered by time.
 */
import { randomFillSync } from 'node:crypto';
import { V7Generator } from 'uuidv7';

const POOL_WORDS = 2048;

function pooledRandom(): { nextUint32(): number } {
  const pool = new Uint32Array(POOL_WORDS);
  let cursor = POOL_WORDS;
  return {
    nextUint32() {
      if (cursor === POOL_WORDS) {
        randomFillSync(pool);
        cursor = 0;
      }
      return pool[cursor++] as number;
    },
  };
}

const generator = new V7Generator(pooledRandom());

/** A new UUIDv7 (RFC 9562): time-ordered, monotonic within this process. */
export function newTimeOrderedId(): string {
  return generator.generate().toString();
}
