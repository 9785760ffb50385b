import { readdir, readFile } from 'node:fs/promises';
import { eld } from 'eld/extrasmall';
import { describe, expect, it } from 'vitest';
import { loadCompactEld } from './eld-tables.js';
import { eldLanguageCodes } from './language-detection.js';

const root = new URL('../../', import.meta.url);

/** Texts in and outside the subset's languages and scripts, short and long. */
const samples = [
  'The planner chooses the cheapest plan for the query and then executes it.',
  'Bilene kjørte hjem til byen, og det var ikke mye trafikk på veien.',
  'Hvordan setter jeg opp replikering mellom to servere?',
  'Der Planer wählt den günstigsten Plan und führt ihn dann aus, wie es sich gehört.',
  "L'optimiseur choisit le plan le moins coûteux pour la requête, puis l'exécute.",
  'El planificador elige el plan más barato para la consulta y luego lo ejecuta.',
  'Planeraren väljer den billigaste planen för frågan och kör den sedan.',
  'Planlæggeren vælger den billigste plan til forespørgslen og udfører den derefter.',
  'Suunnittelija valitsee kyselylle halvimman suunnitelman ja suorittaa sen.',
  'De planner kiest het goedkoopste plan voor de query en voert het daarna uit.',
  'Il pianificatore sceglie il piano più economico per la query e poi lo esegue.',
  'O planejador escolhe o plano mais barato para a consulta e depois o executa.',
  'Планировщик выбирает самый дешёвый план запроса и затем выполняет его.',
  '规划器为查询选择最便宜的计划，然后执行它。',
  'المخطط يختار أرخص خطة للاستعلام ثم ينفذها',
  'Emoji 😀 and a surrogate pair 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 in running English text about vacuum.',
  "don't won't can't it's autovacuum_naptime = 1min",
  'SELECT 1',
  'a',
  '',
  `${'supercalifragilisticexpialidocious'.repeat(5)} word`,
  'æøå '.repeat(400),
];

async function corpus(): Promise<string[]> {
  const texts = [...samples];
  for (const name of await readdir(new URL('docs/', root))) {
    if (!name.endsWith('.md')) continue;
    const text = await readFile(new URL(`docs/${name}`, root), 'utf8');
    texts.push(text);
    // Segment-sized pieces from across the file, as ingestion samples them.
    for (let start = 0; start < text.length; start += 1500) texts.push(text.slice(start, start + 2000));
  }
  for (const file of ['bench/questions/postgres-docs.jsonl', 'examples/questions/weir-docs.jsonl']) {
    for (const line of (await readFile(new URL(file, root), 'utf8')).split('\n')) {
      if (line.startsWith('{')) texts.push((JSON.parse(line) as { question: string }).question);
    }
  }
  return texts;
}

describe('ELD over the compact tables', () => {
  it('gives what ELD with the same language subset gives: language, scores and reliability', async () => {
    eld.setLanguageSubset(eldLanguageCodes());
    const compact = await loadCompactEld(eldLanguageCodes());
    const texts = await corpus();
    expect(texts.length).toBeGreaterThan(500);
    const differences: string[] = [];
    for (const text of texts) {
      const expected = eld.detect(text);
      const actual = compact.detect(text);
      const same =
        actual.language === expected.language &&
        JSON.stringify(actual.getScores()) === JSON.stringify(expected.getScores()) &&
        actual.isReliable() === expected.isReliable();
      if (!same) differences.push(text.slice(0, 60));
    }
    expect(differences).toEqual([]);
    // Not a vacuous comparison: most texts get a language, and several different ones.
    const languages = new Set(texts.map((text) => compact.detect(text).language));
    expect([...languages].filter((language) => language !== '').length).toBeGreaterThanOrEqual(8);
  });

  it('loads one table per subset', async () => {
    const codes = eldLanguageCodes();
    expect(await loadCompactEld(codes)).toBe(await loadCompactEld([...codes].reverse()));
    const english = await loadCompactEld(['en']);
    expect(english.detect(samples[1] as string).language).toBe('en');
  });
});
