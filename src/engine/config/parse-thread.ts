/**
 * Config YAML parsed on a worker thread, so no config holds the service's event loop: a 1 MiB
 * body takes seconds to parse on a loaded machine, and health, the API and the engine answer
 * meanwhile. One thread parses one config at a time; a parse that runs past the time limit ends
 * the thread (the next parse starts a new one) and is refused like any other YAML problem.
 */
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../../runtime/module-worker.js';
import { locator, type ParsedConfig, type PositionTree, type YamlProblem } from './parse-config.js';

export interface ParseRequest {
  id: number;
  text: string;
}

export type ParseReply =
  | { id: number; ok: true; value: unknown; positions: PositionTree | undefined }
  | { id: number; ok: false; problems: YamlProblem[] };

/** Far longer than the largest config allowed takes on a busy machine (seconds); a backstop. */
export const CONFIG_PARSE_TIME_LIMIT_MS = 20_000;

interface Pending {
  request: ParseRequest;
  timeLimitMs: number;
  resolve: (parsed: ParsedConfig) => void;
  reject: (error: unknown) => void;
}

let worker: Worker | undefined;
let running: (Pending & { timer: NodeJS.Timeout }) | undefined;
const queue: Pending[] = [];
let nextId = 1;

/** `text` parsed off the event loop: the same answer parseConfigYaml gives, or a time-limit problem. */
export function parseConfigYamlOffThread(
  text: string,
  timeLimitMs = CONFIG_PARSE_TIME_LIMIT_MS,
): Promise<ParsedConfig> {
  return new Promise((resolve, reject) => {
    queue.push({ request: { id: nextId++, text }, timeLimitMs, resolve, reject });
    startNext();
  });
}

function startNext(): void {
  if (running) return;
  const next = queue.shift();
  if (!next) return;
  let thread: Worker;
  try {
    thread = currentWorker();
  } catch (error) {
    next.reject(error);
    startNext();
    return;
  }
  const timer = setTimeout(() => {
    // The thread is stuck in this parse: end it; the next parse gets a fresh one.
    finish({
      ok: false,
      problems: [
        { message: `the YAML took longer than ${next.timeLimitMs} ms to parse`, line: null, column: null },
      ],
    });
    stopWorker();
  }, next.timeLimitMs);
  running = { ...next, timer };
  thread.postMessage(next.request);
}

/**
 * Starts the parsing thread ahead of the first parse: `weir serve` does it while the database
 * opens, since the pipeline files are parsed before it listens and a thread takes a few tenths
 * of a second to load (issue 35). The thread is the one the first parse would start and keep.
 */
export function warmUpConfigParsing(): void {
  currentWorker();
}

function currentWorker(): Worker {
  if (worker) return worker;
  const started = startModuleWorker('engine/config/parse-config-worker');
  started.on('message', (reply: ParseReply) => {
    if (running?.request.id !== reply.id) return;
    finish(
      reply.ok
        ? { ok: true, value: reply.value, positions: reply.positions, locate: locator(reply.positions) }
        : { ok: false, problems: reply.problems },
    );
    startNext();
  });
  // An end the service did not ask for fails the parse under way; the next one starts a thread.
  const ended = (error: Error) => {
    if (worker !== started) return;
    worker = undefined;
    const current = running;
    if (current) {
      clearTimeout(current.timer);
      running = undefined;
      current.reject(error);
    }
    startNext();
  };
  started.on('error', ended);
  started.on('exit', (code) => ended(new Error(`the config parsing thread exited (code ${code})`)));
  // After the listeners: a 'message' listener refs the worker's port again, and an idle parse
  // thread must not keep the process alive (a CLI or bench that parsed a config never exited).
  started.unref();
  worker = started;
  return started;
}

function finish(parsed: ParsedConfig): void {
  const current = running;
  if (!current) return;
  clearTimeout(current.timer);
  running = undefined;
  current.resolve(parsed);
}

function stopWorker(): void {
  const stopping = worker;
  worker = undefined;
  void stopping?.terminate();
  startNext();
}
