/**
 * A client generated from /openapi.json works (issue 17 item 11). openapi-typescript turns the
 * served document into types; a small program (CALLS below) calls nine endpoints through
 * openapi-fetch with them; TypeScript checks it strictly, so a required run body, a required
 * query parameter that has a default, or an undocumented 200 (storage content, metadata, the
 * event stream) is a compile error; then the same program runs against a listening server.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import createClient from 'openapi-fetch';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';
import { buildApp } from '../src/app.js';
import { loadSettings } from '../src/settings.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { databaseTargets } from './helpers/databases.js';

/** openapi-fetch's own type declarations, imported by absolute path from the temporary folder. */
const openapiFetchTypes = createRequire(import.meta.url)
  .resolve('openapi-fetch')
  .replace(/\.cjs$/, '.mjs');

// Each call leaves out what the server does not require; the annotated types exist only when
// the document describes the 200 (a missing one is a compile error, not an `unknown`).
const CALLS = `
import type { Client } from '${openapiFetchTypes}';
import type { paths } from './openapi.js';

type Api = Client<paths>;
type Get<Path extends keyof paths> = paths[Path] extends { get: { responses: { 200: { content: infer C } } } }
  ? C
  : never;
type ObjectBytes = Get<'/api/v1/storage/objects/{key}'>['application/octet-stream'];
type EventStream = Get<'/api/v1/storage/events'>['text/event-stream'];

function fail(what: string, response: Response): never {
  throw new Error(what + ' answered ' + response.status);
}

export async function runConfig(api: Api, yaml: string) {
  const created = await api.POST('/api/v1/configs', { body: { config_yaml: yaml } });
  if (!created.data) fail('create', created.response);
  const listed = await api.GET('/api/v1/configs');
  if (!listed.data) fail('list', listed.response);
  const run = await api.POST('/api/v1/configs/{config_id}/run', {
    params: { path: { config_id: created.data.id } },
  });
  if (!run.data) fail('run', run.response);
  const waited = await api.POST('/api/v1/executions/{execution_id}/wait', {
    params: { path: { execution_id: run.data.id } },
    body: { timeout_seconds: 60 },
  });
  if (!waited.data) fail('wait', waited.response);
  const listedIds: string[] = listed.data.configs.map((config) => config.id);
  return { configId: created.data.id, listedIds, executionId: run.data.id, status: waited.data.status };
}

export async function readStorage(api: Api, executionId: string, key: string) {
  const objects = await api.GET('/api/v1/storage/objects');
  if (!objects.data) fail('objects', objects.response);
  const metadata = await api.GET('/api/v1/storage/objects/{key}/metadata', { params: { path: { key } } });
  if (!metadata.data) fail('metadata', metadata.response);
  const content = await api.GET('/api/v1/storage/objects/{key}', {
    params: { path: { key } },
    parseAs: 'text',
  });
  if (content.data === undefined) fail('content', content.response);
  const bytes: ObjectBytes = content.data;
  const events = await api.GET('/api/v1/storage/events', {
    params: { query: { execution_id: [executionId] } },
    parseAs: 'text',
  });
  if (events.data === undefined) fail('events', events.response);
  const stream: EventStream = events.data;
  const health = await api.GET('/api/v1/system/health');
  if (!health.data) fail('health', health.response);
  return {
    keys: objects.data.objects.map((object) => object.key),
    metadata: { sha256: metadata.data.sha256, stage: metadata.data.metadata.stage },
    content: { bytes, type: content.response.headers.get('content-type') },
    events: { stream, type: events.response.headers.get('content-type') },
    health: health.data.status,
  };
}

// Issue 33: only the fields a user gives; every other field of these bodies has a default.
export async function searchAndChat(api: Api) {
  const keyword = await api.POST('/api/v1/chat/search/keyword', { body: { query: 'vacuum' } });
  const vector = await api.POST('/api/v1/chat/search/vector', { body: { query: 'vacuum' } });
  const rrf = await api.POST('/api/v1/chat/search/rrf', { body: { query: 'vacuum' } });
  const chat = await api.POST('/api/v1/chat/complete', { body: { query: 'What does vacuum do?' } });
  const evaluation = await api.POST('/api/v1/chat/search/eval', {
    body: { questions: [{ question: 'vacuum', expected: ['vacuum.md'] }], modes: ['keyword'] },
  });
  const diagnostic = await api.POST('/api/v1/system/mq-diagnostic', { body: { host: '127.0.0.1' } });
  return [keyword, vector, rrf, chat, evaluation, diagnostic].map((call) => call.response.status);
}
`;

interface Calls {
  runConfig(
    api: unknown,
    yaml: string,
  ): Promise<{ configId: string; listedIds: string[]; executionId: string; status: string }>;
  readStorage(api: unknown, executionId: string, key: string): Promise<Record<string, unknown>>;
  searchAndChat(api: unknown): Promise<number[]>;
}

const compilerOptions: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
  types: [],
  skipLibCheck: true,
};

/**
 * Generates the types of `document` into `folder` and type-checks CALLS against them: each
 * error as the line of CALLS it is on, then the message.
 */
async function typeCheck(document: OpenAPI3, folder: string): Promise<string[]> {
  await writeFile(join(folder, 'openapi.ts'), astToString(await openapiTS(document)));
  const program = ts.createProgram([join(folder, 'calls.ts')], compilerOptions);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (!diagnostic.file || diagnostic.start === undefined) return message;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return `${diagnostic.file.text.split('\n')[line]?.trim()}: ${message}`;
  });
}

async function fetchDocument(): Promise<OpenAPI3> {
  const app = await buildApp({ settings: loadSettings({}), registry: createBuiltinRegistry() });
  try {
    return (await app.inject({ url: '/openapi.json' })).json();
  } finally {
    await app.close();
  }
}

let folder: string;
let calls: Calls;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'weir-openapi-client-'));
  await writeFile(join(folder, 'package.json'), '{"type": "module"}');
  await writeFile(join(folder, 'calls.ts'), CALLS);
  const javascript = ts.transpileModule(CALLS, {
    compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  await writeFile(join(folder, 'calls.js'), javascript);
  calls = await import(pathToFileURL(join(folder, 'calls.js')).href);
});
afterAll(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe('types generated from /openapi.json', () => {
  it('type-check the calls: optional run body and defaulted query parameters, documented 200s', async () => {
    expect(await typeCheck(await fetchDocument(), folder)).toEqual([]);
  });

  it('reject the calls when the document overstates what is required (the check has teeth)', async () => {
    const document = await fetchDocument();
    // biome-ignore lint/suspicious/noExplicitAny: the document is edited as untyped JSON
    const paths = document.paths as Record<string, any>;
    paths['/api/v1/configs/{config_id}/run'].post.requestBody.required = true;
    for (const parameter of paths['/api/v1/configs'].get.parameters) parameter.required = true;
    const errors = await typeCheck(document, folder);
    expect(errors).toEqual([
      expect.stringMatching(/^const listed = await api\.GET\('\/api\/v1\/configs'\);: Expected 2 arguments/),
      expect.stringMatching(/^const run = .*: Argument of type .* Property 'body' is missing/s),
    ]);
  });

  it('reject the search and chat calls when defaulted body fields are listed as required', async () => {
    const document = await fetchDocument();
    // biome-ignore lint/suspicious/noExplicitAny: the document is edited as untyped JSON
    const paths = document.paths as Record<string, any>;
    const body = (path: string) => paths[path].post.requestBody.content['application/json'].schema;
    body('/api/v1/chat/search/keyword').required = ['query', 'limit', 'match', 'expand', 'translate'];
    body('/api/v1/chat/complete').required = ['query', 'history'];
    body('/api/v1/system/mq-diagnostic').required = ['host', 'port', 'tls', 'timeout_ms'];
    const errors = await typeCheck(document, folder);
    expect(errors).toEqual([
      expect.stringMatching(
        /^const keyword = .*is missing the following properties.*limit, match, expand, translate/s,
      ),
      expect.stringMatching(/^const chat = .*Property 'history' is missing/s),
      expect.stringMatching(
        /^const diagnostic = .*is missing the following properties.*port, tls, timeout_ms/s,
      ),
    ]);
  });
});

describe.each(databaseTargets())('a generated client against a listening server on $name', (target) => {
  let test: TestApp;
  let baseUrl: string;
  beforeAll(async () => {
    test = await createTestApp(target);
    baseUrl = await test.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await test?.close();
  });

  it('creates, lists, runs and waits, then reads storage, its event stream and health', async () => {
    const api = createClient({ baseUrl });
    const yaml = 'routes:\n  - id: client\n    adapters: [{ type: synthetic_sink }]\n';
    const ran = await calls.runConfig(api, yaml);
    expect(ran.listedIds).toContain(ran.configId);
    expect(ran.status).toBe('completed');

    // A key with slashes: the client sends it percent-encoded as one path segment.
    const key = `${ran.executionId}/client_stage/page.md`;
    await test.storage.put(key, '# Page', {
      contentType: 'text/markdown',
      metadata: { execution_id: ran.executionId, stage: 'client_stage' },
    });
    const read = await calls.readStorage(api, ran.executionId, key);
    expect(read).toMatchObject({
      keys: [key],
      metadata: { stage: 'client_stage' },
      content: { bytes: '# Page', type: expect.stringMatching(/^text\/markdown/) },
      events: { type: expect.stringMatching(/^text\/event-stream/) },
    });
    // The execution has ended, so the stream closes at once with its end event.
    expect((read.events as { stream: string }).stream).toContain('event: end');
    expect(read.health).toBeTypeOf('string');
    // The server accepts every body without its defaulted fields: no 400 or 422 (503 where a
    // service, such as chat without an LLM profile, is not configured; 200 otherwise).
    for (const status of await calls.searchAndChat(api)) expect([200, 503]).toContain(status);
  });
});
