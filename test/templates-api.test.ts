import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';
import { databaseTargets } from './helpers/databases.js';

describe.each(databaseTargets())('chat templates API on $name', (target) => {
  let test: TestApp;
  beforeAll(async () => {
    test = await createTestApp(target);
  });
  afterAll(async () => {
    await test?.close();
  });
  const create = (payload: object) =>
    test.app.inject({ method: 'POST', url: '/api/v1/chat/templates', payload });
  const list = async (query = '') =>
    (await test.app.inject({ url: `/api/v1/chat/templates${query}` })).json();

  it('creates with a generated id, reads, replaces and deletes', async () => {
    const response = await create({
      name: 'Support',
      persona: 'You are helpful.',
      system_prompt: 'Be brief.',
      rag: { strategy: 'ensemble', limit: 3 },
      llm: { profile: 'extractive', temperature: 0.2 },
      owner_id: 'alice',
      tags: ['support', 'en', 'support'],
    });
    expect(response.statusCode).toBe(201);
    const created = response.json();
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers.location).toBe(`/api/v1/chat/templates/${created.id}`);
    expect(created).toMatchObject({
      name: 'Support',
      description: null,
      is_public: false,
      tags: ['support', 'en'],
      rag: { strategy: 'ensemble', limit: 3 },
      owner_id: 'alice',
    });
    expect(Date.parse(created.created_at)).not.toBeNaN();
    const read = await test.app.inject({ url: `/api/v1/chat/templates/${created.id}` });
    expect(read.json()).toEqual(created);

    const replaced = await test.app.inject({
      method: 'PUT',
      url: `/api/v1/chat/templates/${created.id}`,
      payload: { id: created.id, name: 'Support v2', is_public: true },
    });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json()).toMatchObject({
      id: created.id,
      name: 'Support v2',
      persona: null,
      is_public: true,
      tags: [],
    });
    expect(replaced.json().created_at).toBe(created.created_at);

    expect(
      (await test.app.inject({ method: 'DELETE', url: `/api/v1/chat/templates/${created.id}` })).statusCode,
    ).toBe(204);
    for (const method of ['GET', 'DELETE'] as const) {
      const gone = await test.app.inject({ method, url: `/api/v1/chat/templates/${created.id}` });
      expect(gone.statusCode).toBe(404);
      expect(gone.json().code).toBe('template_not_found');
    }
    const missing = await test.app.inject({
      method: 'PUT',
      url: `/api/v1/chat/templates/${created.id}`,
      payload: { name: 'x' },
    });
    expect(missing.statusCode).toBe(404);
  });

  it('keeps a client-chosen id and refuses it twice', async () => {
    const id = '0190f1e2-3c4d-7e5f-8a9b-0c1d2e3f4a5b';
    expect((await create({ id, name: 'Chosen' })).json().id).toBe(id);
    const again = await create({ id, name: 'Chosen again' });
    expect(again.statusCode).toBe(400);
    expect(again.json().code).toBe('template_invalid');
  });

  it('answers 400 for an id mismatch and invalid settings, 422 for schema failures', async () => {
    const { id } = (await create({ name: 'Mine' })).json();
    const mismatch = await test.app.inject({
      method: 'PUT',
      url: `/api/v1/chat/templates/${id}`,
      payload: { id: '0190f1e2-3c4d-7e5f-8a9b-000000000000', name: 'Mine' },
    });
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json().code).toBe('template_id_mismatch');
    const invalid = await create({
      name: 'Bad',
      rag: { strategy: 'magic', limit: 0 },
      llm: { temperature: 7 },
    });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().code).toBe('template_invalid');
    expect(invalid.json().errors.length).toBeGreaterThanOrEqual(3);
    expect(invalid.json().detail).toContain('rag.limit');
    for (const payload of [
      {},
      { name: '' },
      { name: 'x', id: 'nope' },
      { name: 'x', tags: 'a' },
      { name: 'x', extra: 1 },
    ]) {
      expect((await create(payload)).statusCode, JSON.stringify(payload)).toBe(422);
    }
    expect((await test.app.inject({ url: '/api/v1/chat/templates/not-a-uuid' })).statusCode).toBe(422);
  });

  it('lists by owner, visibility and any tag, with limit and offset', async () => {
    const fresh = await createTestApp(target);
    try {
      const make = (payload: object) =>
        fresh.app
          .inject({ method: 'POST', url: '/api/v1/chat/templates', payload })
          .then((r) => r.json().id as string);
      const a = await make({ name: 'a', owner_id: 'alice', tags: ['x'] });
      const b = await make({ name: 'b', owner_id: 'bob', is_public: true, tags: ['y'] });
      const c = await make({ name: 'c', owner_id: 'bob', tags: ['x', 'z'] });
      const get = async (query: string) =>
        (await fresh.app.inject({ url: `/api/v1/chat/templates${query}` })).json() as {
          templates: { id: string }[];
          total: number;
          limit: number;
          offset: number;
        };
      const names = (page: { templates: { id: string }[] }) => page.templates.map((t) => t.id).sort();
      const all = await get('');
      expect(all).toMatchObject({ total: 3, limit: 50, offset: 0 });
      expect(names(await get('?owner_id=alice'))).toEqual([a, b].sort());
      expect(names(await get('?owner_id=alice&include_public=false'))).toEqual([a]);
      expect(names(await get('?include_public=false'))).toEqual([a, c].sort());
      expect(names(await get('?tags=x'))).toEqual([a, c].sort());
      expect(names(await get('?tags=y&tags=z'))).toEqual([b, c].sort());
      expect(names(await get('?owner_id=bob&tags=x'))).toEqual([c]);
      const page = await get('?limit=2&offset=2');
      expect(page).toMatchObject({ total: 3, limit: 2, offset: 2 });
      expect(page.templates).toHaveLength(1);
      for (const query of ['?limit=0', '?limit=101', '?offset=-1', '?include_public=maybe']) {
        expect((await fresh.app.inject({ url: `/api/v1/chat/templates${query}` })).statusCode, query).toBe(
          422,
        );
      }
    } finally {
      await fresh.close();
    }
  });

  it('the list is empty, not an error, when nothing matches', async () => {
    expect(await list('?tags=nothing-has-this')).toMatchObject({ templates: [], total: 0 });
  });
});
