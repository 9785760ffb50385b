/** The outcome `weir run` exits with, and its progress output on a terminal and off one. */
import { describe, expect, it } from 'vitest';
import { outcomeExitCode, runOutcome } from '../src/cli/outcome.js';
import { barProgress, plainProgress, progressFor, type StageCounts } from '../src/cli/progress.js';

describe('the outcome of a run', () => {
  const counts = (completed: number, failed: number) => ({
    completed_messages: completed,
    failed_messages: failed,
  });

  it('reads the execution answer outcome when present', () => {
    expect(runOutcome({ status: 'completed', outcome: 'empty' }, counts(5, 0))).toBe('empty');
  });

  it('derives it otherwise: failures make a completed run partial, nothing completed is empty', () => {
    expect(runOutcome({ status: 'completed' }, counts(5, 0))).toBe('succeeded');
    expect(runOutcome({ status: 'completed' }, counts(4, 3))).toBe('partial');
    expect(runOutcome({ status: 'completed' }, counts(0, 0))).toBe('empty');
    expect(runOutcome({ status: 'failed' }, counts(4, 0))).toBe('failed');
    expect(runOutcome({ status: 'cancelled' }, counts(4, 0))).toBe('failed');
    expect(runOutcome({ status: 'completed', outcome: 'bogus' }, counts(1, 1))).toBe('partial');
  });

  it('exits 0 only for succeeded', () => {
    expect(['succeeded', 'partial', 'failed', 'empty'].map((o) => outcomeExitCode(o as never))).toEqual([
      0, 1, 1, 1,
    ]);
  });
});

function recorder(isTTY: boolean) {
  const written: string[] = [];
  return { written, output: { isTTY, columns: 80, write: (text: string) => written.push(text) } };
}

const stage = (completed: number, queued: number, failed = 0): StageCounts => ({
  route_id: 'sink',
  stage: 'synthetic_sink',
  queued,
  completed,
  failed,
  skipped: 0,
});

describe('progress', () => {
  it('off a terminal: a line per stage that changed, at most once a second, and the final counts', () => {
    let clock = 0;
    const { written, output } = recorder(false);
    const progress = plainProgress(output, () => clock);
    progress.update([stage(1, 9)]);
    clock = 500;
    progress.update([stage(5, 5)]); // within the second: not printed
    clock = 1200;
    progress.update([stage(5, 5)]);
    progress.update([stage(5, 5)]); // unchanged: not printed
    clock = 1300;
    progress.update([stage(8, 0, 2)], true); // the last one is printed whenever it comes
    expect(written).toEqual([
      '[0.0s] sink/synthetic_sink 1/10\n',
      '[1.2s] sink/synthetic_sink 5/10\n',
      '[1.3s] sink/synthetic_sink 10/10 (2 failed)\n',
    ]);
  });

  it('on a terminal: a bar per stage, redrawn in place', () => {
    const { written, output } = recorder(true);
    const progress = barProgress(output, () => 0);
    progress.update([stage(0, 4)]);
    progress.update([stage(2, 2)]);
    expect(written[0]).toBe(`\x1b[2Ksink/synthetic_sink [${'-'.repeat(24)}] 0/4\n\x1b[2Kelapsed 0.0s\n`);
    expect(written[1]).toBe(
      `\x1b[2A\x1b[2Ksink/synthetic_sink [${'#'.repeat(12)}${'-'.repeat(12)}] 2/4\n\x1b[2Kelapsed 0.0s\n`,
    );
  });

  it('chooses bars on a terminal and lines elsewhere', () => {
    const tty = recorder(true);
    progressFor(tty.output).update([stage(1, 1)]);
    expect(tty.written[0]).toContain('[');
    expect(tty.written[0]).toContain('\x1b[2K');
    const pipe = recorder(false);
    progressFor(pipe.output).update([stage(1, 1)]);
    expect(pipe.written[0]).not.toContain('\x1b');
  });
});
