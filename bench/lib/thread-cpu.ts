/**
 * CPU seconds per thread of this process (Linux /proc/self/task/<tid>/stat: user and system
 * clock ticks), so a bench can say which thread spent what: the main thread (its tid is the
 * process id), the embedded database's thread, and the rest (libuv's file and DNS pool, V8's
 * compiler and GC helpers, other workers). Empty where /proc is absent.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ: the kernel's clock ticks per second as /proc reports them (100 on Linux). */
const TICKS_PER_SECOND = 100;

export type ThreadCpu = Map<number, { user: number; system: number }>;

export function threadCpu(): ThreadCpu {
  const threads: ThreadCpu = new Map();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces): utime and stime are the 14th and 15th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      threads.set(Number(tid), {
        user: Number(fields[11]) / TICKS_PER_SECOND,
        system: Number(fields[12]) / TICKS_PER_SECOND,
      });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return threads;
}

/**
 * What each thread spent since `before`: the main thread, the busiest other thread (the
 * PGlite thread on the embedded path) and the others together, as one line, then each other
 * thread of 0.05 s or more as `<tid - pid>:<seconds>`. Thread ids count up from the process
 * id in creation order: V8's platform threads (GC and compiler helpers) come right after the
 * main thread, libuv's pool (file system calls) when first used, later.
 */
export function describeThreadCpu(before: ThreadCpu, after: ThreadCpu = threadCpu()): string {
  if (after.size === 0) return 'CPU by thread: not available (no /proc)';
  const spent = [...after].map(([tid, now]) => {
    const then = before.get(tid) ?? { user: 0, system: 0 };
    return { tid, user: now.user - then.user, system: now.system - then.system };
  });
  const format = (entry: { user: number; system: number }) =>
    `${(entry.user + entry.system).toFixed(2)} s (user ${entry.user.toFixed(2)}, system ${entry.system.toFixed(2)})`;
  const main = spent.find((entry) => entry.tid === process.pid) ?? { user: 0, system: 0 };
  const others = spent
    .filter((entry) => entry.tid !== process.pid)
    .sort((a, b) => b.user + b.system - (a.user + a.system));
  const busiest = others[0] ?? { user: 0, system: 0 };
  const rest = others
    .slice(1)
    .reduce((sum, entry) => ({ user: sum.user + entry.user, system: sum.system + entry.system }), {
      user: 0,
      system: 0,
    });
  const listed = others
    .slice(1)
    .filter((entry) => entry.user + entry.system >= 0.05)
    .map((entry) => `${entry.tid - process.pid}:${(entry.user + entry.system).toFixed(2)}`)
    .join(', ');
  return `CPU by thread: main ${format(main)}; busiest other (the PGlite thread when embedded) ${format(busiest)}; ${others.length - 1} others ${format(rest)}${listed ? ` [${listed}]` : ''}`;
}
