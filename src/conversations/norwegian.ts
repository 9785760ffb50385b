/**
 * Is a conversation Norwegian? (conv_norwegian_filter) Bokmål and Nynorsk are one class;
 * Danish and Swedish are the hard negatives, since they share most of their words with it.
 * ELD (the detector the knowledge index already uses, character n-grams, no model download)
 * scores the text; Norwegian needs to win by `margin` over the best other language, and text
 * with fewer than `minLetters` letters is undetermined rather than guessed.
 */
import { type Eld, loadCompactEld } from '../search-index/eld-tables.js';
import { eldLanguageCodes } from '../search-index/language-detection.js';

export interface NorwegianVerdict {
  verdict: 'norwegian' | 'other' | 'undetermined';
  /** ISO 639-1 code of the best-scoring language (`no` for Norwegian); absent when undetermined for length. */
  language?: string;
  /** Score lead of Norwegian over the best other language (negative when another language leads). */
  margin: number;
  letters: number;
}

export interface NorwegianOptions {
  minLetters: number;
  margin: number;
  /** Characters of the text the detector reads. */
  sampleCharacters: number;
}

export const defaultNorwegianOptions: NorwegianOptions = {
  minLetters: 40,
  margin: 0.01,
  sampleCharacters: 4000,
};

/** The detector search uses (the same instance and language subset), loaded once. */
function loadEld(): Promise<Eld> {
  return loadCompactEld(eldLanguageCodes());
}

export type NorwegianClassifier = (text: string) => NorwegianVerdict;

export async function loadNorwegianClassifier(
  options: NorwegianOptions = defaultNorwegianOptions,
): Promise<NorwegianClassifier> {
  const eld = await loadEld();
  return (text) => {
    const sample = text.slice(0, options.sampleCharacters);
    const letters = sample.match(/\p{L}/gu)?.length ?? 0;
    if (letters < options.minLetters) return { verdict: 'undetermined', margin: 0, letters };
    const scores = eld.detect(sample).getScores();
    const ranked = Object.entries(scores).sort((a, b) => b[1] - a[1]);
    const top = ranked[0]?.[0];
    if (!top) return { verdict: 'undetermined', margin: 0, letters };
    const norwegian = scores.no ?? 0;
    const bestOther = Math.max(0, ...ranked.filter(([code]) => code !== 'no').map(([, score]) => score));
    const margin = Math.round((norwegian - bestOther) * 10_000) / 10_000;
    if (top === 'no' && margin >= options.margin)
      return { verdict: 'norwegian', language: 'no', margin, letters };
    // A close call between the Scandinavian languages: spellings only one of them uses decide.
    if (Math.abs(margin) < closeCall && (top === 'no' || top === 'da' || top === 'sv')) {
      const lead = markerLead(sample);
      if (lead.no > 0 && lead.no > lead.other)
        return { verdict: 'norwegian', language: 'no', margin, letters };
      if (top !== 'no' && lead.other > 0) return { verdict: 'other', language: top, margin, letters };
    }
    if (top === 'no') return { verdict: 'undetermined', language: 'no', margin, letters };
    return { verdict: 'other', language: top, margin, letters };
  };
}

/** How close ELD's Norwegian and Danish or Swedish scores must be for the spellings to decide. */
const closeCall = 0.03;

/**
 * Words spelt one way in Norwegian (Bokmål or Nynorsk) and another in Danish or Swedish:
 * function words and common verbs ("hva" / "hvad" / "vad", "meg" / "mig", "av" / "af"),
 * nothing a topic decides.
 */
const norwegianOnly = new Set(
  (
    'hva noe noen meg deg seg av etter gjør gjøre gjort mye veldig bruker brukes sjekke sjekker spørring spørsmål ' +
    'hjelp hjelpe blir ble kjøre kjører tabell ikkje eg kva korleis kor nokon noko berre ein eit dei ho òg ' +
    'korfor kvifor frå meir mykje'
  ).split(' '),
);
const danishOrSwedishOnly = new Set(
  // Danish
  (
    'hvad noget nogen mig dig sig af efter gør gøre gjort meget bruger bruges tjekke tjekker forespørgsel ' +
    'spørgsmål hjælp hjælpe bliver blev køre kører tabel jer ' +
    // Swedish
    'jag och inte att är hur vad något några mig dig sig efter gör göra mycket använder hjälp hjälpa blir ' +
    'köra kör tabell fråga frågor'
  )
    .split(' ')
    .filter((word) => !norwegianOnly.has(word)),
);

function markerLead(text: string): { no: number; other: number } {
  let no = 0;
  let other = 0;
  for (const word of text.toLowerCase().match(/\p{L}+/gu) ?? []) {
    if (norwegianOnly.has(word)) no++;
    else if (danishOrSwedishOnly.has(word)) other++;
  }
  return { no, other };
}
