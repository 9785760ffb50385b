import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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

  it('does nothing for a missing folder', async () => {
    expect(await syncPipelineFiles(path.join(folder, 'absent'), store())).toEqual([]);
  });
});
