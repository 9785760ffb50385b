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
});
