/** Rewrites docs/adapters.md from the built-in adapter registry. */
import { writeFile } from 'node:fs/promises';
import { renderAdapterDocs } from '../src/adapters/adapter-docs.js';
import { createBuiltinRegistry } from '../src/adapters/builtin.js';

await writeFile(
  new URL('../docs/adapters.md', import.meta.url),
  renderAdapterDocs(createBuiltinRegistry().list()),
);
