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
  // Every file read and its stored config looked up at once: at start-up these statements
  // queue behind the first searches on PGlite's one session, and one wait for all the files,
  // rather than one per file, is most of the time to readiness (issue 35). Creating and
  // updating stay one file after another, in name order.
  const lookups = names.map((name) => lookUp(folder, name, store));
  const results: SyncedFile[] = [];
  for (const [position, name] of names.entries()) {
    const file = path.join(folder, name);
    const lookup = (await lookups[position]) as FileLookup | { failed: unknown };
    try {
      if ('failed' in lookup) throw lookup.failed;
      results.push({ file, ...(await syncFile(name, lookup, store)) });
    } catch (error) {
      results.push({ file, outcome: 'failed', error: isAppError(error) ? error.message : String(error) });
    }
  }
  return results;
}

interface FileLookup {
  text: string;
  existing: ConfigDetail | undefined;
}

/** A file's text and the config stored for it; a failure is kept to report in its place (never left unhandled). */
function lookUp(folder: string, name: string, store: ConfigStore): Promise<FileLookup | { failed: unknown }> {
  return Promise.all([readFile(path.join(folder, name), 'utf8'), store.findByOrigin(`file:${name}`)]).then(
    ([text, existing]) => ({ text, existing }),
    (failed: unknown) => ({ failed }),
  );
}

async function syncFile(
  name: string,
  { text, existing }: FileLookup,
  store: ConfigStore,
): Promise<Omit<SyncedFile, 'file'>> {
  const origin = `file:${name}`;
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
