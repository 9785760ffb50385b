/**
 * The PostgreSQL documentation (Debian package postgresql-doc-15), the real pages that the
 * question set, segment fidelity and language detection tests read. .ci/run installs it, so in
 * CI a missing corpus fails the tests that need it; on a developer machine they skip and print
 * why (test/helpers/skip.ts).
 */
import { existsSync } from 'node:fs';
import { missingOutsideCI, skipBecause } from './skip.js';

/** WEIR_TEST_POSTGRES_DOCS moves it (and shows what a machine without it does). */
export const POSTGRES_DOCS = process.env.WEIR_TEST_POSTGRES_DOCS ?? '/usr/share/doc/postgresql-doc-15/html';
export const POSTGRES_DOCS_INSTALL_COMMAND = 'apt-get install -y postgresql-doc-15';

const present = () => existsSync(`${POSTGRES_DOCS}/index.html`);

/** For `it.skipIf`: true (with the reason printed) only outside CI when the corpus is missing. */
export function skipWithoutPostgresDocs(what: string): boolean {
  return skipBecause(
    missingOutsideCI(
      present(),
      `the PostgreSQL docs are not at ${POSTGRES_DOCS} (${POSTGRES_DOCS_INSTALL_COMMAND}; CI installs them)`,
    ),
    what,
  );
}

/** The corpus directory; throws (failing the test) when it is missing, as it does in CI. */
export function postgresDocs(): string {
  if (!present()) {
    throw new Error(
      `the PostgreSQL docs are not at ${POSTGRES_DOCS}: ${POSTGRES_DOCS_INSTALL_COMMAND} (.ci/run installs them)`,
    );
  }
  return POSTGRES_DOCS;
}
