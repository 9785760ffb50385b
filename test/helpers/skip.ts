/**
 * Why a test is skipped, printed where the run shows it rather than only in a title. Every skip
 * site passes its reason through `skipBecause`: undefined means "run", a string means "skip, and
 * say this". Used as `it.skipIf(skipBecause(reason, 'the HNSW test'))(...)`.
 *
 * No runtime import of vitest: global setups import helpers that import this one.
 */
import { inCI } from './chromium.js';

/** True (skip) after printing the reason when `reason` is set; false (run) when it is not. */
export function skipBecause(reason: string | undefined, what: string): boolean {
  if (reason === undefined) return false;
  console.warn(`skipped ${what}: ${reason}`);
  return true;
}

/**
 * For a dependency CI installs: undefined (run) when it is present or CI is set (so the test
 * runs and fails on a broken CI machine), else the reason to skip on a developer machine.
 */
export function missingOutsideCI(present: boolean, reason: string): string | undefined {
  return present || inCI ? undefined : reason;
}
