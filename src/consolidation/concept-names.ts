/**
 * How concept names compare: a normalised key (lower case, words singular, punctuation gone)
 * decides when two names are one concept, and a slug (ASCII, hyphens) names its page.
 */

const irregular: Record<string, string> = {
  indexes: 'index',
  indices: 'index',
  matrices: 'matrix',
  analyses: 'analysis',
  schemata: 'schema',
  data: 'data',
};

/** English plural to singular for the common patterns; other words as they are. */
export function singular(word: string): string {
  const lower = word.toLowerCase();
  const known = irregular[lower];
  if (known) return known;
  if (lower.length <= 3 || /(ss|us|is|ous)$/.test(lower)) return lower;
  if (/[^aeiou]ies$/.test(lower)) return `${lower.slice(0, -3)}y`;
  if (/(sh|ch|x|z)es$/.test(lower)) return lower.slice(0, -2);
  if (/s$/.test(lower)) return lower.slice(0, -1);
  return lower;
}

/** Words of a name: letters, digits and inner `_` `-` `.` kept together (pg_dump, B-tree, max_wal_size). */
export function wordsOf(text: string): string[] {
  return text.match(/[\p{L}\p{N}]+(?:[_\-.'][\p{L}\p{N}]+)*/gu) ?? [];
}

/** The key two names of one concept share: "B-Tree Indexes" and "b-tree index" both give "b-tree index". */
export function normalisedName(name: string): string {
  return wordsOf(name)
    .map((word) => singular(word))
    .join(' ');
}

const transliterations: Record<string, string> = { æ: 'ae', ø: 'o', å: 'a', ß: 'ss', þ: 'th', ð: 'd' };

/** `Write-Ahead Logging (WAL)` -> `write-ahead-logging-wal`; Norwegian letters transliterated. */
export function slugOf(name: string): string {
  const ascii = name
    .toLowerCase()
    .replace(/[æøåßþð]/g, (letter) => transliterations[letter] ?? letter)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '');
  const slug = ascii
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '');
  return slug || 'concept';
}
