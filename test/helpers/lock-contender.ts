/**
 * A process that contends for a data dir's lock (src/db/data-dir-lock.test.ts): it prints
 * `ready`, waits for a line on stdin so every contender tries at the same moment, tries, prints
 * one JSON line ({"held": true} or {"error": message}), and keeps what it took until stdin ends.
 */
import { createInterface } from 'node:readline';
import { lockDataDir } from '../../src/db/data-dir-lock.js';

const dataDir = process.argv[2] as string;
const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
lines.once('line', () => {
  lockDataDir(dataDir).then(
    () => process.stdout.write(`${JSON.stringify({ held: true, pid: process.pid })}\n`),
    (error: Error) => process.stdout.write(`${JSON.stringify({ error: error.message, pid: process.pid })}\n`),
  );
});
lines.once('close', () => process.exit(0));
