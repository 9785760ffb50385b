/**
 * What every bench uses to fail loudly: a check that is not met or a target that is missed exits
 * 1 with a message, every wait has a bound, and a deliberate break (BENCH_BREAK=<name>, read
 * only by the benches) shows the check firing. docs/bench-checks.md lists the breaks and the
 * exit codes they gave.
 */

/** The deliberate break asked for, if it is `name`. Printed, so a broken run is never mistaken for a real one. */
export function benchBreak(name: string): boolean {
  const asked = process.env.BENCH_BREAK === name;
  if (asked) console.warn(`BENCH_BREAK=${name}: this run is broken on purpose and must exit 1`);
  return asked;
}

/** Failed checks so far; `finish` exits with 1 when there is any. */
const failures: string[] = [];

/** Records a failed check (printed at once) when `ok` is false; returns `ok`. */
export function check(ok: boolean, what: string): boolean {
  if (!ok) {
    failures.push(what);
    console.error(`CHECK FAILED: ${what}`);
  }
  return ok;
}

/** A printed target: "met" or "MISSED", and a MISSED one fails the run. */
export function target(met: boolean, what: string): string {
  check(met, `target missed: ${what}`);
  return met ? 'met' : 'MISSED';
}

/**
 * Exits: 1 with a summary when any check failed, else 0. Exits rather than waits for the event
 * loop to empty, so a handle left open (a worker thread, a keep-alive socket) cannot hang a run
 * whose figures are printed.
 */
export function finish(): never {
  if (failures.length > 0) {
    console.error(
      `\n${failures.length} check(s) failed:\n${failures.map((line) => `  - ${line}`).join('\n')}`,
    );
  }
  process.exit(failures.length > 0 ? 1 : 0);
}

/** Stops the bench with exit 1 and the message; for a fault after which nothing can be measured. */
export function abort(message: string): never {
  console.error(`BENCH FAILED: ${message}`);
  process.exit(1);
}

/** `promise`, or exit 1 naming `what` when it takes longer than `ms`. */
export async function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${Math.round(ms / 1000)} s: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } catch (error) {
    abort((error as Error).message);
  } finally {
    clearTimeout(timer);
  }
}
