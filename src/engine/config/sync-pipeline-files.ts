/**
 * Loads the pipeline YAML files of a folder into the config store at start-up, so configs kept
 * in version control are stored, validated and listed like configs created through the API.
 * A file is matched to its config by origin `file:<name>`: a changed file updates the config
 * (version + 1), an unchanged one is left alone. Safe when several instances start together:
 * the unique index on active file origins lets one insert win and the others find it.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { isAppError } from '../../errors.js';
import type { ConfigDetail, ConfigStore } from './config-store.js';
import { hashConfig } from './parse-config.js';

export interface SyncedFile {
  file: string;
  outcome: 'created' | 'updated' | 'unchanged' | 'failed';
  config?: ConfigDetail;
  error?: string;
}

export async function syncPipelineFiles(folder: string, store: ConfigStore): Promise<SyncedFile[]> {
  let names: string[];
  try {
    names = (await readdir(folder)).filter((name) => /\.ya?ml$/i.test(name)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const results: SyncedFile[] = [];
  for (const name of names) {
    const file = path.join(folder, name);
    try {
      results.push({ file, ...(await syncFile(name, await readFile(file, 'utf8'), store)) });
    } catch (error) {
      results.push({ file, outcome: 'failed', error: isAppError(error) ? error.message : String(error) });
    }
  }
  return results;
}

async function syncFile(name: string, text: string, store: ConfigStore): Promise<Omit<SyncedFile, 'file'>> {
  const origin = `file:${name}`;
  const existing = await store.findByOrigin(origin);
  if (existing?.config_hash === hashConfig(text)) return { outcome: 'unchanged', config: existing };
  if (existing) return { outcome: 'updated', config: await store.update(existing.id, { config_yaml: text }) };
  try {
    return { outcome: 'created', config: await store.create({ config_yaml: text, origin }) };
  } catch (error) {
    // Another instance inserted the same file first: take its row.
    const winner = await store.findByOrigin(origin);
    if (winner && winner.config_hash === hashConfig(text)) return { outcome: 'unchanged', config: winner };
    throw error;
  }
}
