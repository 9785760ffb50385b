import { describe, expect, it } from 'vitest';
import { acronymsIn, detectConcepts, phrasesOf } from './keyphrases.js';
import { type LoadedSource, sectionsOf } from './sources.js';

const source = (markdown: string, title: string): LoadedSource => ({
  source_id: title,
  key: `k/${title}.md`,
  title,
  url: null,
  markdown,
  sections: sectionsOf(markdown),
});

describe('offline concept detection', () => {
  it('finds the phrases a page is about, not their parts or filler', () => {
    const page = source(
      `# Replication slots

A replication slot keeps the WAL segments a standby still needs. An unused replication slot can
fill the disk, so drop each replication slot that no standby reads.

## Monitoring

The pg_replication_slots view shows every replication slot and its restart LSN.`,
      'Replication slots',
    );
    const names = detectConcepts(page).map((concept) => concept.name.toLowerCase());
    expect(names[0]).toBe('replication slot');
    expect(names).toContain('standby');
    expect(names).not.toContain('slot');
    expect(names).not.toContain('can');
    const slot = detectConcepts(page).find((concept) => concept.slug === 'replication-slot');
    expect(slot?.evidence[0]).toEqual({
      heading_path: ['Replication slots'],
      quote: 'A replication slot keeps the WAL segments a standby still needs.',
    });
  });

  it('works in Norwegian: Norwegian stop words end phrases', () => {
    const page = source(
      `# Sikkerhetskopiering

En sikkerhetskopi av databasen tas hver natt. Sikkerhetskopien lagres i et eget datasenter,
og gjenoppretting av databasen testes hver måned. Gjenoppretting skal ta under en time.`,
      'Sikkerhetskopiering',
    );
    const names = detectConcepts(page).map((concept) => concept.name.toLowerCase());
    expect(names).toContain('sikkerhetskopiering');
    expect(names).toContain('databasen');
    expect(names).toContain('gjenoppretting');
    expect(names.some((name) => /\b(og|av|i|en|skal)\b/.test(name))).toBe(false);
  });

  it('joins an acronym with its expansion', () => {
    expect(acronymsIn('PostgreSQL uses Write-Ahead Logging (WAL) for durability.')).toEqual([
      ['Write-Ahead Logging', 'WAL'],
    ]);
    const page = source(
      `# Durability

PostgreSQL uses Write-Ahead Logging (WAL) for durability. WAL records reach disk before data.
Write-Ahead Logging also allows point-in-time recovery.`,
      'Durability',
    );
    const wal = detectConcepts(page).find((concept) => concept.name === 'Write-Ahead Logging');
    expect(wal?.aliases).toContain('WAL');
    expect(detectConcepts(page).some((concept) => concept.name === 'WAL')).toBe(false);
  });

  it('splits phrases at stop words and punctuation', () => {
    expect(phrasesOf('the autovacuum launcher, then the checkpointer', 2)).toEqual([
      'autovacuum',
      'launcher',
      'autovacuum launcher',
      'checkpointer',
    ]);
  });

  it('leaves out verbs, colours, prepositions and code that names nothing, and keeps named code', () => {
    const page = source(
      `# Payloads

The fetcher emits \`{title, url, key}\` for each page; \`src/storage/fs.ts\` holds the store, and \`pg_dump\`
writes the backup. The sidecar holds the title, and the sidecar holds the key. A brown disc looks
brown. The worker moved the sidecar inside the bucket, then moved it back. Run \`pg_dump\` nightly.`,
      'Payloads',
    );
    const names = detectConcepts(page, { maxConcepts: 20 }).map((concept) => concept.name.toLowerCase());
    expect(names).toContain('sidecar');
    expect(names).toContain('pg_dump');
    for (const noise of ['src', 'holds', 'brown', 'looks', 'moved', 'inside', 'sidecar holds'])
      expect(names).not.toContain(noise);
  });

  it("weighs a single word down by the corpus's share of sources using it, and drops the corpus's subject", () => {
    const page = source(
      `# Hive tool

The hive tool lifts frames. Bees glue the frames with propolis; the hive tool scrapes propolis off.
Bees guard the hive tool? No: bees guard the entrance.`,
      'Hive tool',
    );
    const plain = detectConcepts(page).map((concept) => concept.name.toLowerCase());
    expect(plain).toContain('bees');
    const corpus = { documents: 20, counts: { bee: 19, frame: 10 } };
    const weighed = detectConcepts(page, { corpus }).map((concept) => concept.name.toLowerCase());
    expect(weighed).not.toContain('bees');
    expect(weighed).toContain('propolis');
  });
});
