import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { uuidv7 } from 'uuidv7';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseTargets } from '../../../test/helpers/databases.js';
import { createBuiltinRegistry } from '../../adapters/builtin.js';
import { createConfigsRepository } from '../../db/configs-repository.js';
import type { Database } from '../../db/database.js';
import { createConfigStore } from './config-store.js';
import { syncPipelineFiles } from './sync-pipeline-files.js';

describe.each(databaseTargets())('syncPipelineFiles on $name', (target) => {
  let database: Database;
  let folder: string;
  beforeAll(async () => {
    database = await target.open();
    folder = await mkdtemp(path.join(tmpdir(), 'weir-pipelines-'));
  });
  afterAll(async () => {
    await database?.close();
    await rm(folder, { recursive: true, force: true });
  });

  const store = () =>
    createConfigStore({
      repository: createConfigsRepository(database.db),
      registry: createBuiltinRegistry(),
      now: () => new Date(),
      newId: uuidv7,
    });

  it('creates, leaves unchanged, updates, and reports files that do not parse', async () => {
    const yaml = 'name: one\nroutes:\n  - id: a\n    adapters: [{ type: synthetic_sink }]\n';
    await writeFile(path.join(folder, 'one.yaml'), yaml);
    await writeFile(path.join(folder, 'broken.yml'), 'routes: [\n');
    await writeFile(path.join(folder, 'notes.txt'), 'ignored');
    const first = await syncPipelineFiles(folder, store());
    expect(first.map((result) => [path.basename(result.file), result.outcome])).toEqual([
      ['broken.yml', 'failed'],
      ['one.yaml', 'created'],
    ]);
    expect(first[1]?.config).toMatchObject({ name: 'one', origin: 'file:one.yaml', is_runnable: true });
    expect(first[0]?.error).toMatch(/YAML parse error/);

    const second = await syncPipelineFiles(folder, store());
    expect(second[1]).toMatchObject({ outcome: 'unchanged', config: { version: 1 } });

    await writeFile(path.join(folder, 'one.yaml'), yaml.replace('name: one', 'name: one again'));
    const third = await syncPipelineFiles(folder, store());
    expect(third[1]).toMatchObject({ outcome: 'updated', config: { version: 2, id: first[1]?.config?.id } });
  });

  it('stores one config per file when instances sync at once', async () => {
    await writeFile(
      path.join(folder, 'race.yaml'),
      'routes:\n  - id: a\n    adapters: [{ type: synthetic_sink }]\n',
    );
    await Promise.all([syncPipelineFiles(folder, store()), syncPipelineFiles(folder, store())]);
    const rows = await database.db
      .selectFrom('pipeline_configs')
      .select('id')
      .where('origin', '=', 'file:race.yaml')
      .where('is_active', '=', true)
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('looks every file up at once (one wait on the database at start-up), and reports a file it cannot read', async () => {
    const own = await mkdtemp(path.join(tmpdir(), 'weir-pipelines-'));
    try {
      const yaml = (name: string) =>
        `name: ${name}\nroutes:\n  - id: a\n    adapters: [{ type: synthetic_sink }]\n`;
      for (const name of ['a', 'b', 'c']) await writeFile(path.join(own, `${name}.yaml`), yaml(name));
      await mkdir(path.join(own, 'directory.yaml'));
      const configs = store();
      let inFlight = 0;
      let most = 0;
      const counting = {
        ...configs,
        async findByOrigin(origin: string) {
          most = Math.max(most, ++inFlight);
          try {
            return await configs.findByOrigin(origin);
          } finally {
            inFlight--;
          }
        },
      };
      const created = await syncPipelineFiles(own, counting);
      expect(created.map((result) => [path.basename(result.file), result.outcome])).toEqual([
        ['a.yaml', 'created'],
        ['b.yaml', 'created'],
        ['c.yaml', 'created'],
        ['directory.yaml', 'failed'],
      ]);
      expect(created[3]?.error).toMatch(/EISDIR/);
      // Created in name order, one after another.
      const ids = created.slice(0, 3).map((result) => result.config?.id as string);
      expect([...ids].sort()).toEqual(ids);
      expect(most).toBe(4);
      most = 0;
      const again = await syncPipelineFiles(own, counting);
      expect(again.slice(0, 3).map((result) => result.outcome)).toEqual([
        'unchanged',
        'unchanged',
        'unchanged',
      ]);
      expect(most).toBe(4);
    } finally {
      await rm(own, { recursive: true, force: true });
    }
  });

  it('does nothing for a missing folder', async () => {
    expect(await syncPipelineFiles(path.join(folder, 'absent'), store())).toEqual([]);
  });
});
