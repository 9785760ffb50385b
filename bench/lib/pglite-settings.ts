/**
 * The embedded Postgres's settings for a bench, as the service reads them: pglite-settings.ts's
 * defaults with WEIR_PGLITE_SETTINGS (name=value, comma-separated) on top, so a setting can be
 * measured A/B against the defaults (issue 35: shared_buffers) without editing the source.
 */
import { parsePgliteSettings } from '../../src/db/pglite-settings.js';

export const benchPgliteSettings: Readonly<Record<string, string>> = parsePgliteSettings(
  (process.env.WEIR_PGLITE_SETTINGS ?? '').split(',').filter((item) => item.trim().length > 0),
);
