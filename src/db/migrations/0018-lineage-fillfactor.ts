import type { Migration } from './migration.js';

/**
 * Lineage pages keep 35% free instead of 20% (migration 2's fillfactor 80), so that finishing a
 * page's messages updates them in place (HOT: no index written, no tuple moved to another page).
 * A message is finished in one statement with the others of its batch, and the rows of a page
 * were queued together, so they are finished together: the old versions are still visible to
 * that statement and cannot be pruned, and every finished version (about 170 bytes, the
 * envelope cleared) needs room on the page beside them. With rows of about 500 bytes (an
 * envelope of 330, bench:engine's) a page holds 13 at fillfactor 80 and its free fifth does not
 * take all 13 finished versions: 19% of the updates were not HOT (81,195 of 100,001), each
 * writing both lineage indexes and another page. At 65 every one was HOT, and finishing 100,000
 * messages took a fifth less of PGlite's CPU (bench/lineage-writes.ts: 989-1,069 against 758-862 ms, alternated, load 16-19;
 * queueing unchanged). Larger envelopes leave more room per row already; only pages written
 * after this migration are filled to 65%.
 */
export const lineageFillfactor: Migration = {
  id: 18,
  name: 'lineage-fillfactor',
  statements: ['alter table lineage set (fillfactor = 65)'],
};
