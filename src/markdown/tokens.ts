/**
 * Token counting for the segmenter. Two counters:
 *
 * - `approximate` (the default): one char-code scan imitating how cl100k_base pre-splits text
 *   (words with their leading space, runs of 1-3 digits, punctuation runs, newlines) with a
 *   per-piece cost for long or non-ASCII words. Calibrated on the PostgreSQL documentation
 *   (see docs/markdown-adapters.md): within 1% of cl100k in total, 89% of pages within
 *   -10%/+12% (tokens.test.ts checks both on a sample), about 40x faster than the real BPE in JavaScript, which would by itself take
 *   a third of the ingestion benchmark's budget.
 * - `cl100k`: the real cl100k_base BPE of js-tiktoken (ranks bundled in the package, loaded
 *   on first use, about half a second), for pipelines that must match an OpenAI model's
 *   limits exactly.
 */
import { createRequire } from 'node:module';

export type TokenizerName = 'approximate' | 'cl100k';

export type TokenCounter = (text: string) => number;

/**
 * One scan over char codes, as cl100k pre-splits text: a letter run together with the one
 * space or punctuation character before it is a word piece; digits go in runs of up to 3;
 * other punctuation runs cost one token per 3 characters; a newline run is one token; other
 * whitespace is free (it joins the next piece). A hand-written scanner because a Unicode
 * regex over the same pieces is about 5x slower, and every block of every page is counted.
 */
export function approximateTokens(text: string): number {
  const length = text.length;
  let count = 0;
  let index = 0;
  while (index < length) {
    const code = text.charCodeAt(index);
    if (code === 10) {
      count++;
      while (index < length && (text.charCodeAt(index) === 10 || text.charCodeAt(index) === 13)) index++;
      continue;
    }
    if (isDigit(code)) {
      const start = index;
      while (index < length && isDigit(text.charCodeAt(index))) index++;
      count += Math.ceil((index - start) / 3);
      continue;
    }
    if (isLetter(code)) {
      index = word(text, index, 0);
      count += lastWordCost;
      continue;
    }
    if (isSpace(code)) {
      // A space before a letter is part of the word; other whitespace costs nothing.
      if (index + 1 < length && isLetter(text.charCodeAt(index + 1))) {
        index = word(text, index + 1, 1);
        count += lastWordCost;
      } else index++;
      continue;
    }
    // Punctuation: a single character before a letter joins the word, a longer run does not.
    const start = index;
    while (index < length) {
      const next = text.charCodeAt(index);
      if (isLetter(next) || isDigit(next) || isSpace(next) || next === 10) break;
      index++;
    }
    if (index - start === 1 && index < length && isLetter(text.charCodeAt(index))) {
      index = word(text, index, 1);
      count += lastWordCost;
    } else count += Math.ceil((index - start) / 3);
  }
  return count;
}

let lastWordCost = 0;

/** Scans the letter run at `start`; sets `lastWordCost`; returns the index after it. */
function word(text: string, start: number, prefix: number): number {
  let index = start;
  let ascii = true;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    if (!isLetter(code)) break;
    if (code > 127) ascii = false;
    index++;
  }
  const size = index - start + prefix;
  // Calibrated (docs/markdown-adapters.md): common words up to 8 characters are one token.
  lastWordCost = ascii ? (size <= 8 ? 1 : Math.ceil(size / 6)) : Math.max(1, Math.ceil(size / 2.5));
  return index;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

function isSpace(code: number): boolean {
  return (
    code === 32 ||
    code === 9 ||
    code === 13 ||
    code === 12 ||
    code === 11 ||
    code === 0xa0 ||
    code === 0x3000 ||
    (code >= 0x2000 && code <= 0x200b)
  );
}

/** ASCII letters and, as an approximation, any non-ASCII character outside punctuation and space blocks. */
function isLetter(code: number): boolean {
  if (code < 128) return (code >= 97 && code <= 122) || (code >= 65 && code <= 90);
  return !(
    code === 0xa0 ||
    code === 0xd7 ||
    code === 0xf7 ||
    (code >= 0x2000 && code <= 0x2bff) ||
    (code >= 0x3000 && code <= 0x303f) ||
    (code >= 0xa1 && code <= 0xbf)
  );
}

let cl100k: TokenCounter | undefined;

function cl100kCounter(): TokenCounter {
  if (!cl100k) {
    // Loaded lazily: the ranks are a 1 MB module that only this counter needs.
    const require = createRequire(import.meta.url);
    const { Tiktoken } = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');
    type Ranks = ConstructorParameters<typeof Tiktoken>[0];
    const loaded = require('js-tiktoken/ranks/cl100k_base') as Ranks | { default: Ranks };
    const encoder = new Tiktoken('default' in loaded ? loaded.default : loaded);
    cl100k = (text) => encoder.encode(text).length;
  }
  return cl100k;
}

export function tokenCounter(name: TokenizerName = 'approximate'): TokenCounter {
  return name === 'cl100k' ? cl100kCounter() : approximateTokens;
}
