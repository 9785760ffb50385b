/** Version numbers of the service and the libraries VersionInfo reports, read once at start. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { packagePath } from './runtime/package-root.js';

const require = createRequire(import.meta.url);

/**
 * The installed version of a dependency. Some packages do not export their package.json, so
 * walk up from the resolved entry point to the package.json that names the package.
 */
function packageVersion(name: string): string {
  try {
    let folder = path.dirname(require.resolve(name));
    while (folder !== path.dirname(folder)) {
      try {
        const manifest = JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8'));
        if (manifest.name === name) return manifest.version as string;
      } catch {
        // no package.json at this level
      }
      folder = path.dirname(folder);
    }
  } catch {
    // not resolvable
  }
  return 'unknown';
}

function ownVersion(): string {
  const text = readFileSync(packagePath('package.json'), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

export const SERVICE_VERSION = ownVersion();
export const FASTIFY_VERSION = packageVersion('fastify');
export const TYPEBOX_VERSION = packageVersion('typebox');
