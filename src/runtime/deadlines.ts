/**
 * Deadlines of one length (a webhook sender's attempt timeout, a STOMP send's wait for its
 * RECEIPT), on one timer. Set in order, they fall due in that order, so they sit in a list in
 * the order set, and the one timer is armed for the first of them: setting or cancelling one
 * is a link in or out of the list. A Node timer per attempt or per message (a Timeout object,
 * the timer list's bookkeeping and a clear) was a measurable part of a webhook delivery's cost
 * on the service thread (docs/benchmarks.md).
 *
 * Times are on the monotonic clock (`performance.now()`), as Node's timers are: a test that
 * fakes the timers must fake `performance` too for a deadline to pass.
 *
 * The timer is armed only while a deadline is pending, so a process with nothing in flight can
 * exit as it could with a timer per attempt.
 */

export interface Deadline {
  /** The deadline no longer applies; its action will not run. */
  cancel(): void;
}

export interface DeadlineList {
  /** Runs `expire` `ms` milliseconds from now unless cancelled first. */
  set(expire: () => void): Deadline;
  /** Whether the timer is armed (a deadline is pending, or was cancelled and not yet passed). */
  readonly armed: boolean;
}

/** A deadline in its list: a class, so no closure is made per deadline. */
class Entry implements Deadline {
  previous: Entry | undefined;
  next: Entry | undefined;
  constructor(
    private readonly list: List,
    readonly at: number,
    public expire: (() => void) | undefined,
  ) {}
  cancel(): void {
    if (this.expire !== undefined) this.list.remove(this);
  }
}

class List implements DeadlineList {
  private first: Entry | undefined;
  private last: Entry | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly passed = () => {
    this.timer = undefined;
    const now = performance.now();
    for (let entry = this.first; entry && entry.at <= now; entry = this.first) {
      const expire = entry.expire as () => void;
      this.unlink(entry);
      expire();
    }
    this.arm();
  };

  constructor(private readonly ms: number) {}

  get armed(): boolean {
    return this.timer !== undefined;
  }

  set(expire: () => void): Deadline {
    const entry = new Entry(this, performance.now() + this.ms, expire);
    entry.previous = this.last;
    if (this.last) this.last.next = entry;
    else this.first = entry;
    this.last = entry;
    this.arm();
    return entry;
  }

  remove(entry: Entry): void {
    this.unlink(entry);
    // Nothing left to wait for: no timer holds the process (or fires for nothing).
    if (!this.first && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private unlink(entry: Entry): void {
    if (entry.previous) entry.previous.next = entry.next;
    else this.first = entry.next;
    if (entry.next) entry.next.previous = entry.previous;
    else this.last = entry.previous;
    entry.previous = undefined;
    entry.next = undefined;
    entry.expire = undefined;
  }

  private arm(): void {
    if (this.timer || !this.first) return;
    this.timer = setTimeout(this.passed, Math.max(1, Math.ceil(this.first.at - performance.now())));
  }
}

export function createDeadlineList(ms: number): DeadlineList {
  return new List(ms);
}

const lists = new Map<number, DeadlineList>();

/** The shared list of deadlines `ms` long. */
export function deadlinesOf(ms: number): DeadlineList {
  let list = lists.get(ms);
  if (!list) {
    list = createDeadlineList(ms);
    lists.set(ms, list);
  }
  return list;
}
