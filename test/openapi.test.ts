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

  it('serves the interactive docs from the package', async () => {
    const response = await app.inject({ url: '/docs/' });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('swagger');
  });
});
