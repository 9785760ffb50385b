import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { itWhere } from './helpers/applies.js';
import { type DatabaseTarget, databaseTargets, vectorDatabaseTargets } from './helpers/databases.js';
import { type KnowledgeFixture, seedKnowledgeFixture } from './helpers/knowledge-fixture.js';

describe.each(await vectorDatabaseTargets())('search API on $name', (target) => {
  let test: TestApp;
  let fixture: KnowledgeFixture;
  const vectors = target.vectors;
  beforeAll(async () => {
    test = await createTestApp(target);
    fixture = await seedKnowledgeFixture(test.database);
  });
  afterAll(async () => {
    await test?.close();
  });
  const search = (type: string, payload: object) =>
    test.app.inject({ method: 'POST', url: `/api/v1/chat/search/${type}`, payload });
  const ids = (body: { results: { segment_id: string }[] }) =>
    body.results.map((result) => result.segment_id);

  it('keyword search stems English: "running" finds the segment that says "run"', async () => {
    const response = await search('keyword', { query: 'running pipelines', language: 'en' });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.search_type).toBe('keyword');
    expect(ids(body)[0]).toBe(fixture.segments.run);
    expect(body.parameters.query_languages).toEqual(['english']);
    const first = body.results[0];
    expect(first.source).toEqual({
      execution_id: fixture.executions.docs,
      document_id: expect.any(String),
      url: 'https://docs.example.org/pipelines',
      object_key: null,
      link: 'https://docs.example.org/pipelines',
      title: 'Pipelines',
      heading_path: ['Pipelines', 'Run a pipeline'],
    });
    expect(first.components).toEqual([
      { ranking: 'keyword', rank: 1, raw_score: expect.any(Number), weight: 1, contribution: first.score },
    ]);
    expect(first.score).toBeGreaterThan(0);
  });

  it('keyword search stems Norwegian: "bilene" finds "bil", with the language given or unknown', async () => {
    const given = (await search('keyword', { query: 'bilene', language: 'nb' })).json();
    expect(ids(given)).toEqual([fixture.segments.bil]);
    // One word is too little to detect a language: every indexed language's stemmer is tried.
    const unknown = (await search('keyword', { query: 'bilene' })).json();
    expect(unknown.parameters.detected_language).toBeNull();
    expect([...unknown.parameters.query_languages].sort()).toEqual(['english', 'norwegian']);
    expect(ids(unknown)).toEqual([fixture.segments.bil]);
    // A detected Norwegian question uses the Norwegian stemmer first, and the index's languages
    // (with Norwegian stop words left out) for the names it shares with them.
    const detected = (await search('keyword', { query: 'hva er det med bilene og hjulene' })).json();
    expect(detected.parameters.query_languages[0]).toBe('norwegian');
    expect(ids(detected)).toContain(fixture.segments.bil);
    // Its words are also searched in English, through the built-in glossary, unless turned off.
    const question = 'hvordan sletter jeg bilene og hjulene';
    const translated = (await search('keyword', { query: question })).json();
    expect(translated.parameters.query_translations).toContainEqual({
      from: 'sletter',
      lexeme: 'delet',
      weight: 1,
    });
    const literal = (await search('keyword', { query: question, translate: false })).json();
    expect(literal.parameters.query_translations).toEqual([]);
  });

  it('keyword search honours websearch syntax with match all, and the filters', async () => {
    const excluded = (await search('keyword', { query: 'hjul -motor', language: 'no', match: 'all' })).json();
    expect(ids(excluded)).toEqual([]);
    // The natural-language default reads "-motor" as one more word.
    const natural = (await search('keyword', { query: 'hjul -motor', language: 'no' })).json();
    expect(ids(natural).length).toBeGreaterThan(0);
    const phrase = (await search('keyword', { query: '"dead tuples"', match: 'all' })).json();
    expect(ids(phrase)).toEqual([fixture.segments.vacuum]);
    const bySource = (
      await search('keyword', {
        query: 'engineers OR pipeline',
        sources: [fixture.executions.norsk],
        match: 'all',
      })
    ).json();
    expect(ids(bySource)).toEqual([fixture.segments.onboarding]);
    expect(bySource.results[0].source.object_key).toBe('files/handbook/onboarding.md');
    expect(bySource.results[0].source.url).toBeNull();
    // No URL: the link opens the stored object through the API (issue 31).
    expect(bySource.results[0].source.link).toBe('/api/v1/storage/objects/files/handbook/onboarding.md');
    const english = (await search('keyword', { query: 'hjul', language: 'english' })).json();
    expect(ids(english)).toEqual([]);
  });

  it('answers 400 for an empty query, an unknown language or model, 422 for schema failures', async () => {
    const blank = await search('keyword', { query: '   ' });
    expect(blank.statusCode).toBe(400);
    expect(blank.json()).toMatchObject({ code: 'search_request_invalid', detail: 'query is empty' });
    const language = await search('keyword', { query: 'run', language: 'klingon' });
    expect(language.statusCode).toBe(400);
    expect(language.json().detail).toContain('klingon');
    const model = await search('rrf', { query: 'run', embedding_model: 'nope' });
    expect(model.statusCode).toBe(400);
    expect(model.json().detail).toContain('unknown embedding model "nope"');
    for (const payload of [
      {},
      { query: '' },
      { query: 'x', limit: 0 },
      { query: 'x', limit: 101 },
      { query: 'x', sources: ['not-a-uuid'] },
      { query: 'x', k: 0 },
      { query: 'x', weights: { keyword: -1 } },
      { query: 'x', candidate_depth: { vector: 5000 } },
      { query: 'x', surprise: true },
    ]) {
      const response = await search('rrf', payload);
      expect(response.statusCode, JSON.stringify(payload)).toBe(422);
      expect(Array.isArray(response.json().detail)).toBe(true);
    }
  });

  itWhere(!vectors)('vector and RRF search answer 503 naming pgvector on a database without it', async () => {
    const response = await search('vector', { query: 'Autovacuum daemons vacuum tables', limit: 3 });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ code: 'vector_search_unavailable' });
    expect(response.json().detail).toContain('pgvector');
    const fused = await search('rrf', { query: 'vacuum dead tuples', k: 10 });
    expect(fused.statusCode).toBe(503);
    expect(fused.json().code).toBe('vector_search_unavailable');
  });

  itWhere(vectors)('vector search ranks by cosine similarity over the model', async () => {
    const response = await search('vector', { query: 'Autovacuum daemons vacuum tables', limit: 3 });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.results).toHaveLength(3);
    expect(body.results[0].segment_id).toBe(fixture.segments.vacuum);
    expect(body.parameters.embedding_model).toBe('hash');
    const scores = body.results.map((result: { score: number }) => result.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(body.results[0].components[0]).toMatchObject({ ranking: 'vector', rank: 1 });
    // The reported score is the cosine similarity of the query and segment vectors.
    const [queryVector] = await fixture.embedder.embed(['Autovacuum daemons vacuum tables']);
    const [segmentVector] = await fixture.embedder.embed([
      'VACUUM reclaims storage occupied by dead tuples. Autovacuum daemons vacuum tables automatically.',
    ]);
    const a = queryVector as Float32Array;
    const b = segmentVector as Float32Array;
    const dot = a.reduce((sum, value, index) => sum + value * (b[index] as number), 0);
    expect(body.results[0].score).toBeCloseTo(dot, 4);
    const filtered = (
      await search('vector', { query: 'vacuum', sources: [fixture.executions.norsk] })
    ).json();
    expect(filtered.results.length).toBe(3);
    for (const result of filtered.results) expect(result.source.execution_id).toBe(fixture.executions.norsk);
    const norwegian = (await search('vector', { query: 'vacuum', language: 'no' })).json();
    expect(norwegian.results.map((result: { language: string }) => result.language)).toEqual([
      'norwegian',
      'norwegian',
    ]);
  });

  itWhere(vectors)('vector search uses the per-model HNSW expression index', async () => {
    const [vector] = await fixture.embedder.embed(['vacuum']);
    const literal = `[${Array.from(vector as Float32Array).join(',')}]`;
    await sql`set enable_seqscan = off`.execute(test.database.db);
    const plan = await sql<{ 'QUERY PLAN': string }>`explain select segment_id from knowledge_embeddings
      where model = ${'hash'} order by embedding::vector(384) <=> ${literal}::vector(384) limit 10`.execute(
      test.database.db,
    );
    await sql`set enable_seqscan = on`.execute(test.database.db);
    const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
    expect(text).toMatch(/Index Scan using knowledge_vectors_hash_/);
  });

  itWhere(vectors)(
    'RRF weighs the lexical hash embedder at a twentieth by default, and a given weight wins',
    async () => {
      const response = await search('rrf', { query: 'vacuum dead tuples' });
      expect(response.json().parameters).toMatchObject({ k: 60, weights: { keyword: 1, vector: 0.05 } });
      const given = await search('rrf', { query: 'vacuum dead tuples', weights: { vector: 1 } });
      expect(given.json().parameters).toMatchObject({ weights: { keyword: 1, vector: 1 } });
    },
  );

  itWhere(vectors)(
    'RRF fuses both rankings with weight / (k + rank) and reports each component',
    async () => {
      // The fused score alone: the rerank (on by default) adds its boost to the score.
      const response = await search('rrf', {
        query: 'vacuum dead tuples',
        k: 10,
        weights: { keyword: 2, vector: 1 },
        rerank: false,
      });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body.search_type).toBe('rrf');
      expect(body.parameters.rerank).toBe(false);
      expect(body.parameters).toMatchObject({ k: 10, weights: { keyword: 2, vector: 1 } });
      const top = body.results[0];
      expect(top.segment_id).toBe(fixture.segments.vacuum);
      const [keyword, vector] = top.components;
      expect(keyword).toMatchObject({ ranking: 'keyword', rank: 1, weight: 2 });
      expect(vector).toMatchObject({ ranking: 'vector', rank: 1, weight: 1 });
      expect(keyword.contribution).toBeCloseTo(2 / 11, 10);
      expect(top.score).toBeCloseTo(2 / 11 + 1 / 11, 10);
      // Results found only by the vector ranking carry a null keyword rank and no contribution.
      const vectorOnly = body.results.find(
        (result: { components: { rank: number | null }[] }) => result.components[0]?.rank === null,
      );
      expect(vectorOnly.components[0]).toMatchObject({ rank: null, raw_score: null, contribution: 0 });
      expect(vectorOnly.score).toBeCloseTo(1 / (10 + vectorOnly.components[1].rank), 10);
      for (const result of body.results) {
        const sum = result.components.reduce(
          (total: number, c: { contribution: number }) => total + c.contribution,
          0,
        );
        expect(result.score).toBeCloseTo(sum, 10);
      }
      const scores = body.results.map((result: { score: number }) => result.score);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
      expect(body.total).toBe(7);
      // A zero keyword weight leaves the vector order.
      const vectorOnlyRrf = (
        await search('rrf', { query: 'vacuum dead tuples', weights: { keyword: 0 }, rerank: false })
      ).json();
      const plainVector = (await search('vector', { query: 'vacuum dead tuples', limit: 10 })).json();
      expect(ids(vectorOnlyRrf)).toEqual(ids(plainVector));
      const depth = (
        await search('rrf', { query: 'vacuum', candidate_depth: { keyword: 1, vector: 1 } })
      ).json();
      expect(depth.parameters.candidate_depth).toEqual({ keyword: 10, vector: 10 });
    },
  );

  it('capabilities report models with index status, strategies, languages and defaults', async () => {
    const body = (await test.app.inject({ url: '/api/v1/chat/capabilities' })).json();
    expect(body.llm_models).toEqual([
      { name: 'extractive', provider: 'extractive', model: null, is_default: true },
    ]);
    expect(body.embedding_models).toEqual([
      {
        name: 'hash',
        provider: 'hash',
        dimensions: 384,
        indexed_segments: 7,
        index_status: vectors ? 'ready' : 'unavailable',
      },
    ]);
    expect(body.retrieval_strategies).toEqual(
      vectors ? ['merge', 'sequential', 'ensemble', 'keyword'] : ['keyword'],
    );
    expect(body.context_modes).toEqual(['segments', 'none']);
    expect(body.languages).toContainEqual({ code: 'no', text_search_config: 'norwegian' });
    expect(body.defaults).toMatchObject({ llm_profile: 'extractive', embedding_model: 'hash', rrf_k: 60 });
  });

  it('sources lists executions with embeddings, filtered by model and min_segments', async () => {
    const all = (await test.app.inject({ url: '/api/v1/chat/sources' })).json();
    expect(all.total).toBe(2);
    const byId = Object.fromEntries(
      all.sources.map((source: { execution_id: string }) => [source.execution_id, source]),
    );
    expect(byId[fixture.executions.docs]).toMatchObject({
      embedding_models: ['hash'],
      document_count: 2,
      segment_count: 4,
      config_id: null,
    });
    expect(byId[fixture.executions.norsk]).toMatchObject({ document_count: 2, segment_count: 3 });
    const many = (await test.app.inject({ url: '/api/v1/chat/sources?min_segments=4' })).json();
    expect(many.sources.map((source: { execution_id: string }) => source.execution_id)).toEqual([
      fixture.executions.docs,
    ]);
    const other = (await test.app.inject({ url: '/api/v1/chat/sources?embedding_model=other' })).json();
    expect(other).toEqual({ sources: [], total: 0 });
    for (const query of ['min_segments=0', 'min_segments=abc']) {
      const response = await test.app.inject({ url: `/api/v1/chat/sources?${query}` });
      expect(response.statusCode).toBe(422);
    }
  });
});

describe('search API without its dependencies', () => {
  it('answers 503 without a database and without an embedding model', async () => {
    const { buildApp } = await import('../src/app.js');
    const { loadSettings } = await import('../src/settings.js');
    const app = await buildApp({ settings: loadSettings({}) });
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/chat/search/keyword',
      payload: { query: 'x' },
    });
    expect(response.statusCode).toBe(503);
    expect(response.json().code).toBe('search_unavailable');
    expect((await app.inject({ url: '/api/v1/chat/capabilities' })).statusCode).toBe(503);
    await app.close();

    const target = databaseTargets()[0] as DatabaseTarget;
    const test = await createTestApp(target, { settings: { embedding_models: [] } });
    try {
      const vector = await test.app.inject({
        method: 'POST',
        url: '/api/v1/chat/search/vector',
        payload: { query: 'x' },
      });
      expect(vector.statusCode).toBe(503);
      expect(vector.json()).toMatchObject({ code: 'search_unavailable' });
      expect(vector.json().detail).toContain('embedding_models');
      const keyword = await test.app.inject({
        method: 'POST',
        url: '/api/v1/chat/search/keyword',
        payload: { query: 'x' },
      });
      expect(keyword.statusCode).toBe(200);
    } finally {
      await test.close();
    }
  });
});
