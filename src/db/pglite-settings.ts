/**
 * The embedded Postgres's memory settings, passed on PGlite's command line (`-c name=value`,
 * never written into the data dir's postgresql.conf, so an operator's file keeps its say).
 *
 * Postgres sizes `shared_buffers` for a server: 128 MB, which PGlite allocates and touches in
 * its WebAssembly memory at open, and WebAssembly memory never shrinks. Measured on the
 * embedded defaults (docs/benchmarks.md, "Start-up, first queries and idle memory"), a bare
 * PGlite with pgvector opened on a data dir holds about 300 MB at the default, about 166 MB at
 * 32 MB and 126 MB at 16 MB. 16 MB cost no CPU (issue 35, alternated runs: bench:ingest 30.0
 * against 29.5 s of CPU, bench:search-load's single-client searches 17.8 against 18.7 ms of CPU
 * per RRF search from memory, 30.3 against 28.8 by SQL); a larger index is read from the
 * data dir's files more often: WEIR_PGLITE_SETTINGS raises it. The WebAssembly memory's initial size
 * cannot go below the module's own minimum (128 MB, PGlite's default), so it is left.
 * `WEIR_PGLITE_SETTINGS` (settings.ts) overrides or adds settings, name=value comma-separated.
 */
import { PGlite } from '@electric-sql/pglite';

export const embeddedPostgresDefaults: Readonly<Record<string, string>> = {
  shared_buffers: '16MB',
};

/** PGlite's start parameters with the defaults above and `overrides` on top. */
export function pgliteStartParams(overrides: Readonly<Record<string, string>> = {}): string[] {
  const settings = { ...embeddedPostgresDefaults, ...overrides };
  return [
    ...PGlite.defaultStartParams,
    ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
  ];
}

/** `shared_buffers=32MB, work_mem=8MB` -> { shared_buffers: '32MB', work_mem: '8MB' }. */
export function parsePgliteSettings(items: readonly string[]): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const item of items) {
    const match = /^([a-z_][a-z0-9_.]*)\s*=\s*(\S.*)$/i.exec(item.trim());
    if (!match)
      throw new Error(
        `${JSON.stringify(item)} is not name=value (a Postgres setting, such as shared_buffers=32MB)`,
      );
    settings[match[1] as string] = (match[2] as string).trim();
  }
  return settings;
}
