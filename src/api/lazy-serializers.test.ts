import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildLazySerializer } from './lazy-serializers.js';

const Thing = {
  $id: 'Thing',
  type: 'object',
  properties: { name: { type: 'string' }, count: { type: 'integer' } },
} as const;

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

function lazyApp(): FastifyInstance {
  const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: buildLazySerializer } } });
  apps.push(app);
  return app;
}

describe('buildLazySerializer', () => {
  it('compiles no response schema at start-up: a broken one fails its route only, when it answers', async () => {
    const app = lazyApp();
    const broken = { response: { 200: { $ref: 'Missing#' } } };
    app.get('/broken', { schema: broken }, async () => ({ name: 'x' }));
    app.get('/fine', { schema: { response: { 200: Thing } } }, async () => ({ name: 'x', count: 1 }));

    await app.ready(); // Fastify's own compilers throw here (FST_ERR_SCH_SERIALIZATION_BUILD)

    expect((await app.inject({ url: '/fine' })).statusCode).toBe(200);
    expect((await app.inject({ url: '/broken' })).statusCode).toBe(500);
  });

  it('sends what the eager serializer sends', async () => {
    const body = { name: 'weir', count: '7', extra: 'dropped' };
    const schema = { response: { 200: Thing } };
    const eager = Fastify();
    apps.push(eager);
    eager.get('/', { schema }, async () => body);
    const lazy = lazyApp();
    lazy.get('/', { schema }, async () => body);

    const expected = (await eager.inject({ url: '/' })).body;
    expect(expected).toBe('{"name":"weir","count":7}');
    expect((await lazy.inject({ url: '/' })).body).toBe(expected);
    expect((await lazy.inject({ url: '/' })).body).toBe(expected); // the compiled one, again
  });

  it('resolves the shared schemas added before the routes', async () => {
    const app = lazyApp();
    app.addSchema(Thing);
    app.get('/itself', { schema: { response: { 200: Thing } } }, async () => ({ name: 'a', count: 1 }));
    app.get('/by-ref', { schema: { response: { 200: { $ref: 'Thing#' } } } }, async () => ({ name: 'b' }));

    expect((await app.inject({ url: '/itself' })).body).toBe('{"name":"a","count":1}');
    expect((await app.inject({ url: '/by-ref' })).body).toBe('{"name":"b"}');
  });
});

describe('buildLazySerializer at start-up', () => {
  it('compiles the probes (health and readiness) as the app gets ready, every other route when it answers', async () => {
    const app = lazyApp();
    const broken = { response: { 200: { $ref: 'Missing#' } } };
    app.get('/api/v1/elsewhere', { schema: broken }, async () => ({ name: 'x' }));
    app.get('/api/v1/system/health', { schema: broken }, async () => ({ name: 'x' }));

    // Only the health route's broken schema is compiled, so only it fails the start.
    await expect(app.ready()).rejects.toThrow();
  });

  it('sends the same body from a probe compiled at start', async () => {
    const app = lazyApp();
    app.get('/api/v1/system/ready', { schema: { response: { 200: Thing } } }, async () => ({
      name: 'weir',
      count: '7',
      extra: 'dropped',
    }));
    expect((await app.inject({ url: '/api/v1/system/ready' })).body).toBe('{"name":"weir","count":7}');
  });
});
