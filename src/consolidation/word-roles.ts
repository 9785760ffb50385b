/**
 * What a word does in a sentence, as far as concept detection needs to know without a tagger:
 * whether it can be or end a concept's name. A concept is named by a noun or a noun phrase
 * ("varroa mite", "brood box"); the one-word noise the stop word lists let through was verbs
 * ("looks", "moved", "holds"), prepositions and adverbs ("inside", "back"), colours and other
 * adjectives ("brown", "full") and nouns too general to be looked up ("end", "day"). On
 * technical pages it was also field names and paths written as code (`title`, `key`,
 * `src/storage/fs.ts`), which are no concepts either.
 *
 * Three kinds of evidence, each cheap and deterministic per source:
 * - lists (prepositions and adverbs break a phrase; colours, common adjectives and general
 *   nouns may start or sit inside one but neither end it nor stand alone);
 * - the word's shape (a lower-case participle in -ed);
 * - how the page itself uses the word: a word seen more often in a verb's position (after
 *   "to", a modal or "not"; before an article or object pronoun) than in a noun's (after an
 *   article or preposition; before "of") is a verb on this page.
 */

import { singular } from './concept-names.js';

/** Prepositions and adverbs the stop word lists lack: they end a candidate like stop words. */
export const phraseBreakWords = new Set(
  `inside outside below above beneath behind beside underneath throughout onto upon down back away
  near around toward towards during against among across along off within without per via despite
  except unlike ahead apart together later soon almost quite rather enough else ever perhaps maybe
  indeed already once instead otherwise anyway meanwhile elsewhere nearly mostly fully partly
  gently quickly slowly usually easily simply clearly likely looks look looked looking seems seem`
    .split(/\s+/)
    .filter(Boolean),
);

/**
 * Words that may start or sit inside a concept's name ("white wax", "young bees", "open mesh
 * floor", "swarming season") but are no concept alone and do not end one.
 */
const modifierWords = `
  white black brown red green blue yellow grey gray orange pink purple dark pale golden
  full empty little small large big huge tiny good bad better best worse worst high low long short
  clean dirty dry wet warm cold hot cool early late heavy light hard soft easy quick slow strong weak
  fresh main whole entire real right wrong ready able sure extra common usual single double free
  close far outer inner upper lower top bottom middle final initial whole own next latest
  hooked sealed capped drawn flat thick thin narrow wide deep shallow cheap expensive safe
`;

/** General nouns: part of a name ("broodless period") but no concept alone. */
const generalNouns = `
  end ends beginning start side sides day days week weeks year years month months hour hours
  minute minutes second seconds morning evening night place places lot lots bit bits half rest
  front edge edges area areas amount amounts size sizes order step steps thing things piece pieces
  reason reasons result results problem problems question questions answer answers idea ideas
  word words sign signs line lines people person someone everyone while
`;

const notAloneWords = new Set(`${modifierWords} ${generalNouns}`.split(/\s+/).filter(Boolean));

/** A lower-case participle ("moved", "sealed", "capped"); "seed" and "need" are not. */
function isParticiple(word: string): boolean {
  return word === word.toLowerCase() && word.length >= 5 && /[^e]ed$/.test(word);
}

/** Whether `word` (as written) may end a concept's name or be one alone. */
export function canEndName(word: string, verbs: ReadonlySet<string>): boolean {
  const lower = word.toLowerCase();
  return !notAloneWords.has(lower) && !isParticiple(word) && !verbs.has(singular(word));
}

/** Words before which a word stands as a verb: articles, determiners, object pronouns, numbers. */
const objectStarts = new Set(
  `the a an its their his her this these those every each it them him us our your my
  two three four five six seven eight nine ten`
    .split(/\s+/)
    .filter(Boolean),
);
/** Words after which a word stands as a verb: infinitive, modals, negation, subject pronouns. */
const verbOpeners = new Set(
  `to can cannot could will would should must may might shall not does do did doesn't don't
  didn't won't can't they it we you he she i also often always never then usually still just only
  rarely sometimes first`
    .split(/\s+/)
    .filter(Boolean),
);
/** Words after which a word stands as a noun (or a noun's adjective). */
const nounOpeners = new Set(
  `the a an its their his her this these those each every our your my of in on with for from by
  into at no any some`
    .split(/\s+/)
    .filter(Boolean),
);

/**
 * The words a source uses as verbs more often than as nouns, from the word before and after
 * each occurrence in its sentences. `wordsOf` gives a sentence's words.
 */
export function verbsOfSource(sentences: Iterable<string[]>): Set<string> {
  const verbal = new Map<string, number>();
  const nominal = new Map<string, number>();
  const add = (counts: Map<string, number>, word: string) => counts.set(word, (counts.get(word) ?? 0) + 1);
  for (const words of sentences) {
    // "reaches" and "reach" are one word here, as they are one candidate's key.
    const lower = words.map((word) => singular(word));
    lower.forEach((word, index) => {
      const before = lower[index - 1];
      const after = lower[index + 1];
      // Sentence-initial, before an article or number: an imperative ("Move two frames").
      if (
        (before !== undefined && verbOpeners.has(before)) ||
        (after !== undefined && objectStarts.has(after))
      )
        add(verbal, word);
      if ((before !== undefined && nounOpeners.has(before)) || after === 'of') add(nominal, word);
    });
  }
  const verbs = new Set<string>();
  for (const [word, count] of verbal) if (count > (nominal.get(word) ?? 0)) verbs.add(word);
  return verbs;
}

/**
 * Inline code that names something (`pg_dump`, `fileshare_roots`, `s3rver`, `WAL`) is kept
 * as a word of the text; other code (`title`, `key` as field names, paths, payload shapes such
 * as `{markdown, front_matter}`, commands) is replaced by a phrase break: the words inside it
 * are no prose.
 */
export function isNamingCode(code: string): boolean {
  const text = code.trim();
  if (!/^[\p{L}][\p{L}\p{N}_.-]*[\p{L}\p{N}]$/u.test(text)) return false;
  // A plain dictionary word in code is a field, option or key name ("title", "batch").
  return /[_\d-]|\.[\p{L}]/u.test(text) || /\p{Lu}/u.test(text.slice(1));
}
