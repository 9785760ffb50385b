import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { buildApp } from '../src/app.js';
import { AppError } from '../src/errors.js';
import { loadSettings } from '../src/settings.js';

describe('error bodies', () => {
  let app: Awaited<ReturnType<typeof buildApp>>;
  beforeAll(async () => {
    app = await buildApp({
      settings: loadSettings({ WEIR_BODY_LIMIT: '2048' }),
      registry: createBuiltinRegistry(),
    });
    app.get('/boom', async () => {
      throw new Error('secret internal detail');
    });
    app.get('/app-error', async () => {
      throw new AppError('orchestrator_unavailable', 'the orchestrator is not running');
    });
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers an unknown endpoint with 404 and a detail', async () => {
    const response = await app.inject({ url: '/api/v1/nothing-here' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ detail: 'no endpoint GET /api/v1/nothing-here', code: 'not_found' });
  });

  it('answers malformed JSON with a 422 json_invalid entry', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/adapters/synthetic_sink/validate',
      headers: { 'content-type': 'application/json' },
      payload: '{"config": ',
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
  });

  it('answers a media type it cannot parse with 415', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/adapters/synthetic_sink/validate',
      headers: { 'content-type': 'application/xml' },
      payload: '<config/>',
    });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toMatchObject({ code: 'unsupported_media_type' });
  });

  it('answers a plain-text body where an object is expected with 422', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/adapters/synthetic_sink/validate',
      headers: { 'content-type': 'text/plain' },
      payload: 'config',
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().detail[0]).toMatchObject({ loc: ['body'], type: 'dict_type', input: 'config' });
  });

  it('answers an oversized body with 413', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v1/adapters/synthetic_sink/validate',
      payload: { config: { padding: 'x'.repeat(4096) } },
    });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ code: 'payload_too_large' });
  });

  it('hides the message and stack of an unexpected error', async () => {
    const response = await app.inject({ url: '/boom' });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual({ detail: 'Internal Server Error', code: 'internal_error' });
    expect(response.body).not.toContain('secret');
    expect(response.body).not.toContain('at ');
  });

  it('maps an AppError to its catalogue status', async () => {
    const response = await app.inject({ url: '/app-error' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({
      detail: 'the orchestrator is not running',
      code: 'orchestrator_unavailable',
    });
  });
});
