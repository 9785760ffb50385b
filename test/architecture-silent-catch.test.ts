/**
 * No silent catch in src/ (issue 32): a `.catch(() => {})` or `.catch(() => undefined)` drops
 * an error without a log or a count. The ones that stay are listed here, per file, with why the
 * error carries no information worth keeping. A new one fails this test until it logs, counts,
 * or is listed with its reason.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from './helpers/source-files.js';

const allowed: Record<string, { count: number; reason: string }> = {
  'src/serve.ts': {
    count: 3,
    reason:
      "warming up word vectors and language tables at start: a failed load shows again, and is reported, where search uses them; the database handle's `opened` is awaited (its error thrown) once the app is built",
  },
  'src/db/deferred-database.ts': {
    count: 2,
    reason:
      'a failed open is reported through `opened` and every statement; closing or observing a database that never opened has nothing to do',
  },
  'src/early-database.ts': {
    count: 2,
    reason:
      'the database opened early is taken by serve, which awaits it and reports its error; an unused one is closed on a best-effort basis',
  },
  'src/browser/chromium.ts': {
    count: 1,
    reason: 'closing a browser context in finally: the work result or error wins',
  },
  'src/engine/message-processing.ts': {
    count: 1,
    reason: 'the publish promise is awaited (and its error thrown) before the next chunk',
  },
  'src/engine/adapter-retries.ts': {
    count: 1,
    reason: 'a retry sleep aborted by the signal ends the loop, which checks the signal',
  },
  'src/http/fetch-once.ts': {
    count: 2,
    reason: 'cancelling a body already refused as too large: the refusal is the error',
  },
  'src/api/storage.ts': {
    count: 2,
    reason: 'optional enrichment (execution info, object metadata) answered as absent when the look-up fails',
  },
  'src/api/storage-events.ts': {
    count: 2,
    reason: 'unsubscribing a closed stream; a watched execution that cannot be read is polled again',
  },
  'src/embedding/word-vectors.ts': {
    count: 1,
    reason: 'word vectors are optional: without them query expansion is off, which search reports',
  },
  'src/db/database.ts': {
    count: 1,
    reason:
      'an open that failed releases the data dir lock if it was taken: the open error is thrown, and a failed lock is that error',
  },
  'src/db/embedded-maintenance.ts': {
    count: 2,
    reason: 'a previous maintenance run reported its own failure; only the ordering is awaited here',
  },
  'src/webhooks/subscription-view.ts': {
    count: 1,
    reason: 'waits for a load whose failure its own caller receives and reports',
  },
  'src/documents/pdf-to-markdown.ts': {
    count: 1,
    reason: 'destroying the PDF task in finally: the parse result or error wins',
  },
};

const silentCatch = /\.catch\(\(\) => (?:\{\}|undefined)\)/g;

describe('silent catches in src/', () => {
  it('are only the listed ones, each with its reason', async () => {
    const found: Record<string, number> = {};
    const files = await sourceFiles('src');
    expect(files.length).toBeGreaterThan(100);
    for (const file of files) {
      const count = (await readFile(file, 'utf8')).match(silentCatch)?.length ?? 0;
      if (count > 0) found[file] = count;
    }
    expect(found).toEqual(
      Object.fromEntries(Object.entries(allowed).map(([file, entry]) => [file, entry.count])),
    );
    for (const entry of Object.values(allowed)) expect(entry.reason.length).toBeGreaterThan(20);
  });
});
