import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { vectorDatabaseTargets } from './helpers/databases.js';
import { seedKnowledgeFixture } from './helpers/knowledge-fixture.js';

/** Questions over the knowledge fixture: four pages it holds, one it does not. */
const questions = [
  {
    id: 'run',
    question: 'How do I run a pipeline?',
    expected: ['pipelines'],
    style: 'keyword',
    language: 'en',
    split: 'dev',
  },
  {
    id: 'vacuum',
    question: 'What reclaims the storage of dead tuples?',
    expected: ['https://docs.example.org/vacuum'],
    style: 'paraphrase',
    language: 'en',
    split: 'test',
  },
  { id: 'bil', question: 'Hva trenger en bil?', expected: ['biler'], style: 'paraphrase', language: 'no' },
  { id: 'onboarding', question: 'laptop and mentor in the first week', expected: ['onboarding.md'] },
  { id: 'absent', question: 'quantum chromodynamics lattice', expected: ['physics.html'], style: 'keyword' },
];

describe.each(await vectorDatabaseTargets())('evaluation API on $name', (target) => {
  let test: TestApp;
  const vectors = target.vectors;
  beforeAll(async () => {
    test = await createTestApp(target);
    await seedKnowledgeFixture(test.database);
  });
  afterAll(async () => {
    await test?.close();
  });
  const evaluate = (payload: object) =>
    test.app.inject({ method: 'POST', url: '/api/v1/chat/search/eval', payload });

  it('scores every search mode with subsets, latency and misses', async () => {
    const response = await evaluate({ questions });
    expect(response.statusCode, response.body).toBe(200);
    const report = response.json();
    expect(report.questions).toBe(5);
    expect(report.parameters).toMatchObject({ limit: 50 });
    expect(report.modes.map((mode: { mode: string }) => mode.mode)).toEqual(
      vectors ? ['keyword', 'vector', 'rrf'] : ['keyword'],
    );
    const keyword = report.modes[0];
    expect(keyword.errors).toEqual([]);
    // The fixture has four pages: each held page is among the first 10 when found at all.
    expect(keyword.metrics.hit_at_10).toBe(0.8);
    expect(keyword.metrics.mrr_at_10).toBeGreaterThan(0.5);
    expect(keyword.metrics.ndcg_at_10).toBeGreaterThan(0.5);
    expect(keyword.latency_ms.p50).toBeGreaterThan(0);
    expect(keyword.server_ms.p99).toBeGreaterThanOrEqual(keyword.server_ms.p50);
    expect(
      keyword.subsets.map((subset: { field: string; value: string; questions: number }) => [
        subset.field,
        subset.value,
        subset.questions,
      ]),
    ).toEqual([
      ['style', 'keyword', 2],
      ['style', 'paraphrase', 2],
      ['language', 'en', 2],
      ['language', 'no', 1],
      ['split', 'dev', 1],
      ['split', 'test', 1],
    ]);
    expect(keyword.misses).toHaveLength(1);
    expect(keyword.misses[0]).toMatchObject({
      id: 'absent',
      expected: ['physics.html'],
      expected_rank: null,
    });
    for (const returned of keyword.misses[0].returned) {
      expect(returned).toEqual({
        rank: expect.any(Number),
        url: expect.toSatisfy((url: unknown) => url === null || typeof url === 'string'),
        object_key: expect.toSatisfy((key: unknown) => key === null || typeof key === 'string'),
        title: expect.any(String),
      });
    }
    if (vectors) {
      // On the fixture the vector and RRF rankings find the same four held pages as keyword.
      for (const mode of report.modes.slice(1)) {
        expect(mode.errors, mode.mode).toEqual([]);
        expect(mode.failed, mode.mode).toBe(0);
        expect(mode.metrics.hit_at_10, mode.mode).toBe(0.8);
        expect(mode.metrics.mrr_at_10, mode.mode).toBeGreaterThan(0.5);
        expect(mode.metrics.ndcg_at_10, mode.mode).toBeGreaterThan(0.5);
        expect(mode.latency_ms.p50, mode.mode).toBeGreaterThan(0);
        expect(
          mode.misses.map((miss: { id: string }) => miss.id),
          mode.mode,
        ).toEqual(['absent']);
      }
      // Vector search always returns the nearest segments, so the absent page's miss lists them.
      const vector = report.modes[1];
      expect(
        vector.misses.find((miss: { id: string }) => miss.id === 'absent').returned.length,
      ).toBeGreaterThan(0);
    }
  });

  it('passes the search options to every search, and scores chat by its cited sources', async () => {
    const response = await evaluate({
      questions,
      modes: ['keyword', 'chat'],
      language: 'nb',
      limit: 20,
    });
    expect(response.statusCode, response.body).toBe(200);
    const report = response.json();
    expect(report.parameters).toMatchObject({ language: 'nb', limit: 20 });
    const [keyword, chat] = report.modes;
    // Only Norwegian segments are searched: only the Norwegian question finds its page.
    expect(keyword.metrics.hit_at_10).toBe(0.2);
    expect(keyword.misses.map((miss: { id: string }) => miss.id)).toEqual([
      'run',
      'vacuum',
      'onboarding',
      'absent',
    ]);
    // Chat runs with its own defaults (extractive answers cite the passages they quote).
    expect(chat).toMatchObject({ mode: 'chat', questions: 5, failed: 0 });
    // It is not limited to Norwegian: it cites every held page, as keyword search finds them.
    expect(chat.metrics.hit_at_10).toBe(0.8);
    expect(chat.misses.map((miss: { id: string }) => miss.id)).toEqual(['absent']);
  });

  // Only a target without pgvector can refuse; the others score vector and RRF above.
  if (!vectors) {
    it('refuses vector modes without pgvector', async () => {
      for (const mode of ['vector', 'rrf']) {
        const refused = await evaluate({ questions, modes: [mode] });
        expect(refused.statusCode, mode).toBe(503);
        expect(refused.json()).toMatchObject({ code: 'vector_search_unavailable' });
      }
    });
  }

  it('refuses bad questions with 400, schema failures with 422', async () => {
    const duplicate = await evaluate({
      questions: [questions[0], { ...questions[1], id: 'run' }],
      modes: ['keyword'],
    });
    expect(duplicate.statusCode).toBe(400);
    expect(duplicate.json()).toEqual({
      detail: 'question id "run" appears twice',
      code: 'search_request_invalid',
    });
    const tooMany = await evaluate({
      questions: Array.from({ length: 1001 }, (_, index) => ({
        question: `q ${index}`,
        expected: ['a.html'],
      })),
    });
    expect(tooMany.statusCode).toBe(422);
    expect(tooMany.json().detail[0]).toMatchObject({ loc: ['body', 'questions'], type: 'too_long' });
    for (const payload of [
      {},
      { questions: [] },
      { questions: [{ question: 'x', expected: [] }] },
      { questions: [{ question: 'x' }] },
      { questions: [{ question: 'x', expected: ['a'], extra: 1 }] },
      { questions: [questions[0]], modes: ['bm25'] },
      { questions: [questions[0]], modes: ['keyword', 'keyword'] },
      { questions: [questions[0]], limit: 101 },
      { questions: [questions[0]], k: 0 },
      { questions: [questions[0]], query: 'not here' },
    ]) {
      const response = await evaluate(payload);
      expect(response.statusCode, JSON.stringify(payload)).toBe(422);
      expect(Array.isArray(response.json().detail)).toBe(true);
    }
  });

  it('is in the OpenAPI document with its named schemas', async () => {
    const document = (await test.app.inject({ url: '/openapi.json' })).json();
    const operation = document.paths['/api/v1/chat/search/eval'].post;
    expect(operation.tags).toEqual(['chat']);
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '400', '422', '503']));
    expect(document.components.schemas).toHaveProperty('EvaluationRequest');
    expect(document.components.schemas).toHaveProperty('EvaluationReport');
  });
});
