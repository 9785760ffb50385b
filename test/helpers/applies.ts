/**
 * For a behaviour some targets have and others do not (vector search on a database with
 * pgvector, a connection cut on a network broker): `itWhere(applies)` defines the test where it
 * applies and nothing elsewhere. Not a skip: the other targets test what they do instead (the 503
 * without pgvector, for one), so a skip there would report a gap that is not one, and CI would
 * show skips it should not. A test that cannot run where it applies is a skip with its reason
 * printed (skip.ts).
 */
import { it } from 'vitest';

type ItFunction = (name: string, body: () => Promise<void> | void, timeout?: number) => void;

export function itWhere(applies: boolean): ItFunction {
  return applies ? (name, body, timeout) => it(name, body, timeout) : () => {};
}
