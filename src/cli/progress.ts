/**
 * Progress of `weir run`, per stage: on a terminal, one bar per stage redrawn in place (plain
 * ANSI: cursor up, clear line); otherwise one line per stage whose counts changed, at most
 * once a second, so a log file or a pipe gets a readable record and not a flood.
 */
import type { StageCounts } from '../db/execution-types.js';

export type { StageCounts };

export interface ProgressOutput {
  write(text: string): unknown;
  isTTY?: boolean | undefined;
  columns?: number | undefined;
}

export interface Progress {
  /** New counts; `final` draws them whatever the time since the last line. */
  update(stages: readonly StageCounts[], final?: boolean): void;
}

const PLAIN_INTERVAL_MS = 1000;
const BAR_WIDTH = 24;

function stageName(stage: StageCounts): string {
  return `${stage.route_id}/${stage.stage}`;
}

function countsText(stage: StageCounts): string {
  const finished = stage.completed + stage.failed + stage.skipped;
  const total = finished + stage.queued;
  const extras = [
    stage.failed > 0 ? `${stage.failed} failed` : '',
    stage.skipped > 0 ? `${stage.skipped} skipped` : '',
  ].filter((part) => part.length > 0);
  return `${finished}/${total}${extras.length > 0 ? ` (${extras.join(', ')})` : ''}`;
}

function seconds(elapsedMs: number): string {
  return `${(elapsedMs / 1000).toFixed(1)}s`;
}

export function plainProgress(output: ProgressOutput, now: () => number = Date.now): Progress {
  const started = now();
  const printed = new Map<string, string>();
  let lastPrint = Number.NEGATIVE_INFINITY;
  return {
    update(stages, final = false) {
      if (!final && now() - lastPrint < PLAIN_INTERVAL_MS) return;
      const changed = stages.filter((stage) => printed.get(stageName(stage)) !== countsText(stage));
      if (changed.length === 0) return;
      lastPrint = now();
      for (const stage of changed) {
        printed.set(stageName(stage), countsText(stage));
        output.write(`[${seconds(lastPrint - started)}] ${stageName(stage)} ${countsText(stage)}\n`);
      }
    },
  };
}

export function barProgress(output: ProgressOutput, now: () => number = Date.now): Progress {
  const started = now();
  let drawnLines = 0;
  return {
    update(stages) {
      const nameWidth = Math.max(0, ...stages.map((stage) => stageName(stage).length));
      const lines = stages.map((stage) => {
        const finished = stage.completed + stage.failed + stage.skipped;
        const total = finished + stage.queued;
        const filled = total === 0 ? 0 : Math.round((finished / total) * BAR_WIDTH);
        const bar = `${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}`;
        const line = `${stageName(stage).padEnd(nameWidth)} [${bar}] ${countsText(stage)}`;
        // A line wider than the terminal wraps, and the redraw would then climb too few lines.
        return output.columns ? line.slice(0, output.columns - 1) : line;
      });
      lines.push(`elapsed ${seconds(now() - started)}`);
      const up = drawnLines > 0 ? `\x1b[${drawnLines}A` : '';
      output.write(`${up}${lines.map((line) => `\x1b[2K${line}\n`).join('')}`);
      drawnLines = lines.length;
    },
  };
}

/** Bars on a terminal, plain lines elsewhere. */
export function progressFor(output: ProgressOutput): Progress {
  return output.isTTY ? barProgress(output) : plainProgress(output);
}
