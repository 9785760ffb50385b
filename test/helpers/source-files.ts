/** The TypeScript sources under a folder, tests (`*.test.ts`) left out: what architecture checks read. */
import { readdir } from 'node:fs/promises';
import path from 'node:path';

export async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}
