/**
 * Reads a tsvector's text form (`'lexeme':1A,5,9B 'other':3`), as `search_vector::text`
 * gives it, into what BM25F needs per lexeme: its positions and those of weight A (title and
 * headings, see keyword-sql.ts). tsvectorout writes each lexeme quoted, with `'` and `\`
 * doubled, then its positions, each with its weight letter unless the weight is D.
 */
export interface LexemeCounts {
  lexeme: string;
  /** Positions stored for the lexeme (what ts_rank sees: at most 256). */
  occurrences: number;
  /** Of those, the positions of weight A. */
  headingOccurrences: number;
}

export function parseTsvectorText(text: string): LexemeCounts[] {
  const entries: LexemeCounts[] = [];
  let at = 0;
  const length = text.length;
  while (at < length) {
    if (text[at] === ' ') {
      at++;
      continue;
    }
    if (text[at] !== "'") throw new Error(`unexpected ${JSON.stringify(text[at])} at ${at} in a tsvector`);
    at++;
    let lexeme = '';
    for (;;) {
      const quote = text.indexOf("'", at);
      const backslash = text.indexOf('\\', at);
      if (quote < 0) throw new Error('unterminated lexeme in a tsvector');
      if (backslash >= 0 && backslash < quote) {
        lexeme += text.slice(at, backslash) + text.charAt(backslash + 1);
        at = backslash + 2;
        continue;
      }
      lexeme += text.slice(at, quote);
      at = quote + 1;
      if (text[at] === "'") {
        lexeme += "'";
        at++;
        continue;
      }
      break;
    }
    let occurrences = 0;
    let headingOccurrences = 0;
    if (text[at] === ':') {
      at++;
      while (at < length && text[at] !== ' ') {
        const code = text.charCodeAt(at);
        if (code === 44 /* , */) {
          at++;
          continue;
        }
        if (code >= 48 && code <= 57) {
          while (at < length && text.charCodeAt(at) >= 48 && text.charCodeAt(at) <= 57) at++;
          occurrences++;
          if (text[at] === 'A') headingOccurrences++;
          if (text[at] === 'A' || text[at] === 'B' || text[at] === 'C') at++;
          continue;
        }
        throw new Error(`unexpected ${JSON.stringify(text[at])} at ${at} in a tsvector`);
      }
    }
    // A lexeme without positions (a stripped vector) counts once for ts_rank, at weight D.
    entries.push({ lexeme, occurrences: Math.max(occurrences, 1), headingOccurrences });
  }
  return entries;
}
