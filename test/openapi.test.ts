import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { buildApp } from '../src/app.js';
import { loadSettings } from '../src/settings.js';

/** Every named response record of spec 2.9. */
const specRecords = [
  'AdapterListResponse',
  'AdapterInfoResponse',
  'ConfigValidationResponse',
  'CapabilitiesResponse',
  'SourcesResponse',
  'RRFSearchResponse',
  'ChatCompletionResponse',
  'TemplateListResponse',
  'ConfigListResponse',
  'PipelineListResponse',
  'PipelineDetail',
  'PipelineMetrics',
  'AggregateMetrics',
  'PipelineControlResponse',
  'DetachedReplayResponse',
  'RoutesListResponse',
  'ListObjectsResponse',
  'ObjectMetadataResponse',
  'BrowseResponse',
  'SystemHealthResponse',
  'SystemMetrics',
  'SystemConfigResponse',
  'ReloadResponse',
  'VersionInfo',
  'MQDiagnosticResponse',
];

type Parameter = { in: string; name: string; required?: boolean; schema?: { default?: unknown } };

describe('OpenAPI document', () => {
  let app: Awaited<ReturnType<typeof buildApp>>;
  // biome-ignore lint/suspicious/noExplicitAny: the document is walked as untyped JSON
  let document: Record<string, any>;
  beforeAll(async () => {
    app = await buildApp({ settings: loadSettings({}), registry: createBuiltinRegistry() });
    const response = await app.inject({ url: '/openapi.json' });
    expect(response.statusCode).toBe(200);
    document = response.json();
  });
  afterAll(async () => {
    await app.close();
  });

  it('is valid OpenAPI 3.1 according to an independent validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('names the spec tags and puts every operation under one', () => {
    expect(document.tags.map((tag: { name: string }) => tag.name)).toEqual(
      expect.arrayContaining([
        'system',
        'adapters',
        'chat',
        'configs',
        'pipelines',
        'replay',
        'storage',
        'webhooks',
      ]),
    );
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations as Record<string, { tags?: string[] }>)) {
        expect(operation.tags, `${method} ${path}`).toHaveLength(1);
      }
    }
  });

  it('has every named response record of spec 2.9 as a schema', () => {
    const missing = specRecords.filter((name) => !(name in document.components.schemas));
    expect(missing).toEqual([]);
  });

  it('documents the 422 body on operations with input', () => {
    const list = document.paths['/api/v1/configs'].get;
    expect(list.responses['422'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/HTTPValidationError',
    );
  });

  it('requires of a client only what the server requires', () => {
    const defaulted: string[] = [];
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(
        operations as Record<string, { parameters?: Parameter[] }>,
      )) {
        for (const parameter of operation.parameters ?? []) {
          if (parameter.in === 'query' && parameter.schema?.default !== undefined && parameter.required) {
            defaulted.push(`${method} ${path} ${parameter.name}`);
          }
        }
      }
    }
    expect(defaulted).toEqual([]);
    expect(document.paths['/api/v1/configs/{config_id}/run'].post.requestBody.required).toBe(false);
    expect(document.paths['/api/v1/configs'].post.requestBody.required).toBe(true);
  });

  it('documents storage content, metadata and the event streams with their media types', () => {
    const content = (path: string, method = 'get') =>
      Object.keys(document.paths[path][method].responses['200'].content);
    expect(Object.keys(document.paths).filter((path) => path.includes('{*}'))).toEqual([]);
    expect(
      document.paths['/api/v1/storage/objects/{key}/metadata'].get.responses['200'].content[
        'application/json'
      ].schema.$ref,
    ).toBe('#/components/schemas/ObjectMetadataResponse');
    expect(content('/api/v1/storage/objects/{key}')).toContain('application/octet-stream');
    expect(content('/api/v1/storage/events')).toEqual(['text/event-stream']);
    expect(content('/api/v1/chat/stream', 'post')).toEqual(['text/event-stream']);
  });

  it('serves the interactive docs from the package', async () => {
    const response = await app.inject({ url: '/docs/' });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('swagger');
  });
});
