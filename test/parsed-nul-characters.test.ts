/**
 * Issue 30, small guards: a NUL made by a YAML escape (`"a\0b"`, `"\x00"`, `"\u0000"`) exists
 * only once the config is parsed, past the check of the request as sent. Create, update and run
 * answer 422 `string_nul` naming where in the YAML it is, never a 500 from the database.
 */
import { uuidv7 } from 'uuidv7';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConfigsRepository } from '../src/db/configs-repository.js';
import { hashConfig } from '../src/engine/config/parse-config.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { databaseTargets } from './helpers/databases.js';

const route = 'routes:\n  - id: a\n    adapters: [{ type: synthetic_sink }]\n';
/** Each YAML escape of NUL, where it lands in the parsed config, and the YAML that holds it. */
const cases: Array<[string, (string | number)[]]> = [
  [`name: "a\\0b"\n${route}`, ['name']],
  [`description: "x\\x00"\n${route}`, ['description']],
  [`${route}init_message:\n  payload:\n    text: "\\u0000"\n`, ['init_message', 'payload', 'text']],
  [`${route}init_message:\n  payload:\n    "k\\0": 1\n`, ['init_message', 'payload', 'k\u0000']],
  [`${route}init_message:\n  payload:\n    list: [ok, "\\x00"]\n`, ['init_message', 'payload', 'list', 1]],
  [`routes:\n  - id: "a\\0"\n    adapters: [{ type: synthetic_sink }]\n`, ['routes', 0, 'id']],
];

describe.each(databaseTargets())('NUL characters made by YAML escapes on $name (issue 30)', (target) => {
  let test: TestApp;
  beforeAll(async () => {
    test = await createTestApp(target);
  });
  afterAll(async () => {
    await test?.close();
  });
  const send = (method: 'POST' | 'PUT', url: string, contentType: string, payload: string) =>
    test.app.inject({ method, url, headers: { 'content-type': contentType }, payload });

  function expectNulAt(response: { statusCode: number; json: () => unknown }, loc: unknown[]): void {
    expect(response.statusCode, JSON.stringify(loc)).toBe(422);
    expect(response.json()).toMatchObject({
      detail: [{ loc, type: 'string_nul', msg: 'String should not contain NUL characters' }],
    });
  }

  it('refuses each escape in a YAML body and in a JSON config_yaml on create with 422', async () => {
    for (const [yaml, path] of cases) {
      expectNulAt(await send('POST', '/api/v1/configs', 'application/yaml', yaml), [
        'body',
        'config_yaml',
        ...path,
      ]);
      const json = JSON.stringify({ config_yaml: yaml });
      expectNulAt(await send('POST', '/api/v1/configs', 'application/json', json), [
        'body',
        'config_yaml',
        ...path,
      ]);
    }
    const listed = await test.app.inject({ url: '/api/v1/configs' });
    expect(listed.json().total).toBe(0);
  });

  it('refuses each escape on update with 422 and leaves the config as it was', async () => {
    const created = await send('POST', '/api/v1/configs', 'application/yaml', `name: fine\n${route}`);
    expect(created.statusCode).toBe(201);
    const id = created.json().id;
    for (const [yaml, path] of cases) {
      expectNulAt(await send('PUT', `/api/v1/configs/${id}`, 'application/yaml', yaml), [
        'body',
        'config_yaml',
        ...path,
      ]);
    }
    const stored = await test.app.inject({ url: `/api/v1/configs/${id}` });
    expect(stored.json()).toMatchObject({ name: 'fine', version: 1 });
  });

  it('refuses to run a stored config whose YAML makes a NUL, with 422 and no execution', async () => {
    // As a row stored before create refused such YAML would be.
    const yaml = `${route}init_message:\n  payload:\n    text: "\\u0000"\n`;
    const id = uuidv7();
    await createConfigsRepository(test.database.db).insert({
      id,
      name: 'old',
      description: null,
      origin: 'api',
      config_yaml: yaml,
      config_hash: hashConfig(yaml),
      now: new Date(),
    });
    const run = await send('POST', `/api/v1/configs/${id}/run`, 'application/json', '{}');
    expectNulAt(run, ['config_yaml', 'init_message', 'payload', 'text']);
    const executions = await test.app.inject({ url: '/api/v1/executions' });
    expect(executions.json().total).toBe(0);
  });
});
