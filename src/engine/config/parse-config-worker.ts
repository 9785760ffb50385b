/**
 * The config parsing thread (see parse-thread.ts): parses YAML with the same function the
 * service thread would use and sends back plain data (the value and its positions).
 */
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { parseConfigYaml } from './parse-config.js';
import type { ParseReply, ParseRequest } from './parse-thread.js';

const port = parentPort;
if (!port) throw new Error('parse-config-worker.ts runs as a worker thread only');

// On Linux a nice value is per thread: this one yields the cores to the service thread (health,
// the API) when the machine is busy. Where it cannot be lowered, the parse runs as it is.
try {
  setPriority(19);
} catch {}

port.on('message', (request: ParseRequest) => {
  const parsed = parseConfigYaml(request.text);
  const reply: ParseReply = parsed.ok
    ? { id: request.id, ok: true, value: parsed.value, positions: parsed.positions }
    : { id: request.id, ok: false, problems: parsed.problems };
  port.postMessage(reply);
});
