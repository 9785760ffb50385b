/**
 * A PostgreSQL server without pgvector: one warning at start-up (missingPgvectorWarning, said
 * by serve.ts), and vector search, RRF search and chat strategies that need vectors answer 503
 * vector_search_unavailable with a catalogue body, no stack trace, and no error logged per
 * request (errorCatalogue's warnedAtStart, api/error-handler.ts).
 */
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installErrorHandling } from '../src/api/error-handler.js';
import { missingPgvectorWarning } from '../src/db/pgvector.js';
import { AppError } from '../src/errors.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { itWhere } from './helpers/applies.js';
import { vectorDatabaseTargets } from './helpers/databases.js';
import { seedKnowledgeFixture } from './helpers/knowledge-fixture.js';

/** A Fastify logger option whose lines land in `lines` (parsed). */
function capturedLogger() {
  const lines: { level: number; msg?: string; err?: { stack?: string } }[] = [];
  const logger = { level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line)) } };
  return { lines, logger, errors: () => lines.filter((line) => line.level >= 50) };
}

describe('the error handler and standing states', () => {
  it('answers a state warned about at start-up without logging an error; other 5xx are logged', async () => {
    const log = capturedLogger();
    const app = Fastify({ logger: log.logger });
    installErrorHandling(app);
    app.get('/vectors', async () => {
      throw new AppError('vector_search_unavailable', 'vector search needs the pgvector extension');
    });
    app.get('/storage', async () => {
      throw new AppError('storage_unavailable', 'object storage is down');
    });
    const vectors = await app.inject({ url: '/vectors' });
    expect(vectors.statusCode).toBe(503);
    expect(vectors.json()).toEqual({
      detail: 'vector search needs the pgvector extension',
      code: 'vector_search_unavailable',
    });
    expect(log.errors()).toEqual([]);
    const storage = await app.inject({ url: '/storage' });
    expect(storage.statusCode).toBe(503);
    expect(log.errors().map((line) => line.msg)).toEqual(['object storage is down']);
    await app.close();
  });
});

describe.each(await vectorDatabaseTargets())('pgvector on $name', (target) => {
  let test: TestApp;
  const log = capturedLogger();
  let executions: { docs: string; norsk: string };
  beforeAll(async () => {
    test = await createTestApp(target, { logger: log.logger });
    executions = (await seedKnowledgeFixture(test.database)).executions;
  });
  afterAll(async () => {
    await test?.close();
  });

  it('is warned about at start-up exactly when it is missing', async () => {
    const warning = await missingPgvectorWarning(test.database.db);
    if (target.vectors) expect(warning).toBeUndefined();
    else
      expect(warning).toMatch(/no pgvector extension.*503 vector_search_unavailable.*keyword search works/);
  });

  itWhere(!target.vectors)(
    'answers vector, RRF and vector chat with a 503 catalogue body, no stack, no error per request',
    async () => {
      const post = (url: string, payload: object) =>
        test.app.inject({ method: 'POST', url: `/api/v1/chat/${url}`, payload });
      const refused = [
        await post('search/vector', { query: 'vacuum dead tuples' }),
        await post('search/rrf', { query: 'vacuum dead tuples' }),
        await post('search/rrf', { query: 'vacuum again' }),
        await post('complete', {
          query: 'hjul og motor',
          configuration: { strategy: 'merge', sources: [executions.norsk, executions.docs] },
        }),
      ];
      for (const response of refused) {
        expect(response.statusCode).toBe(503);
        expect(Object.keys(response.json()).sort()).toEqual(['code', 'detail']);
        expect(response.json().code).toBe('vector_search_unavailable');
        expect(response.body).not.toMatch(/\bat .+\.(?:ts|js):\d+/);
      }
      const keyword = await post('search/keyword', { query: 'vacuum dead tuples' });
      expect(keyword.statusCode).toBe(200);
      expect(log.errors()).toEqual([]);
      expect(log.lines.filter((line) => line.msg === 'request completed')).toHaveLength(5);
    },
  );
});
