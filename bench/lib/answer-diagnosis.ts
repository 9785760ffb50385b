/**
 * Why an offline answer missed its gold fact (`npm run bench:answers -- --diagnose`). The
 * question is asked again with a deeper retrieval (`depth` passages; the ranking's top 5 are
 * the same, search-service.ts ranks over 50 candidates either way), and the miss is put in the
 * first class that holds:
 * - `not retrieved`: no passage of the answer's 5 holds the gold string (its rank in the deeper
 *   list is given, when it is there);
 * - `no unit`: a passage holds it, but none of its units (answer-units.ts) does: the unit was
 *   dropped, cut, or a table row lost its shape;
 * - `not chosen`: a unit holds it but was not quoted (its place among the scored units given).
 */
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../src/db/database.js';
import { answerUnits } from '../../src/llm/answer-units.js';
import { scoredUnits } from '../../src/llm/extractive-answer.js';
import { createTextAnalyzer } from '../../src/search/text-analysis.js';
import { type AnswerQuestion, matchedGold } from './answer-scoring.js';

const answerDepth = 5;

interface Source {
  citation: number;
  segment_id: string;
  text: string;
  source: { heading_path: string[] };
}

export interface Diagnosis {
  cause: 'not retrieved' | 'no unit' | 'not chosen';
  detail: string;
}

export async function diagnoseMiss(
  app: FastifyInstance,
  database: Database,
  question: AnswerQuestion,
  depth = 20,
): Promise<Diagnosis> {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/chat/complete',
    payload: { query: question.question, configuration: { limit: depth } },
  });
  const sources = (response.json() as { sources: Source[] }).sources;
  const holding = sources.findIndex((source) => matchedGold(source.text, question.gold) !== undefined);
  if (holding < 0 || holding >= answerDepth)
    return {
      cause: 'not retrieved',
      detail: holding < 0 ? `not in the top ${depth}` : `first at rank ${holding + 1}`,
    };
  const top = sources.slice(0, answerDepth);
  const segment = top[holding] as Source;
  const units = answerUnits(segment.text);
  if (!units.some((unit) => matchedGold(unit.text, question.gold) !== undefined)) {
    const gold = matchedGold(segment.text, question.gold) ?? '';
    const at = segment.text.toLowerCase().indexOf(gold.toLowerCase().slice(0, 12));
    const around = segment.text.slice(Math.max(0, at - 120), at + 160).replace(/\s+/g, ' ');
    return { cause: 'no unit', detail: `passage ${holding + 1}: …${around}…` };
  }
  const rows = await database.db
    .selectFrom('knowledge_segments')
    .select('language')
    .where(
      'segment_id',
      'in',
      top.map((source) => source.segment_id),
    )
    .execute();
  const languages = [...new Set(rows.map((row) => row.language ?? 'simple'))];
  const candidates = await scoredUnits(
    {
      query: question.question,
      passages: top.map((source) => ({
        citation: source.citation,
        text: source.text,
        headingPath: source.source.heading_path,
      })),
    },
    createTextAnalyzer(database.db, languages),
  );
  const ranked = [...candidates].sort((a, b) => b.score - a.score);
  const place = ranked.findIndex(
    (candidate) => matchedGold(candidate.unit.text, question.gold) !== undefined,
  );
  const unit = ranked[place];
  if (!unit) return { cause: 'not chosen', detail: 'unscored' };
  return {
    cause: 'not chosen',
    detail: `passage ${unit.passage + 1}, ${unit.unit.kind} ranked ${place + 1} of ${ranked.length}, score ${unit.score.toFixed(2)} vs best ${ranked[0]?.score.toFixed(2)}, ${unit.unit.text.length} chars: ${unit.unit.text.slice(0, 160)}`,
  };
}
