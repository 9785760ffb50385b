import MiniSearch from 'minisearch';
import { describe, expect, it } from 'vitest';
import { bestBaselineReport, betterBaseline } from '../bench/lib/best-baseline.js';
import type { EvaluationReport, ModeReport } from '../src/evaluation/evaluate.js';
import { analyzeEnglish, analyzeEnglishTerm, tokenizeEnglish } from '../src/search/english-analyzer.js';

// The English analyzer of bench:quality's baseline and of the corpus LSA (src/search/english-analyzer.ts):
// what Lucene's EnglishAnalyzer does to a text, and the "best bm25" choice between the two baselines.
describe('English analyzer baseline', () => {
  it('keeps names joined by underscores or inner full stops whole, as UAX #29 does', () => {
    expect(tokenizeEnglish('Set work_mem in postgresql.conf (since 9.6).')).toEqual([
      'Set',
      'work_mem',
      'in',
      'postgresql.conf',
      'since',
      '9.6',
    ]);
  });

  it('lower-cases, drops the English stop words and the possessive, and Porter-stems', () => {
    expect(analyzeEnglish("The planner's statistics are gathered by VACUUMING the tables")).toEqual([
      'planner',
      'statist',
      'gather',
      'vacuum',
      'tabl',
    ]);
    expect(analyzeEnglishTerm('The')).toBeNull();
    expect(analyzeEnglishTerm('connections')).toBe('connect');
  });

  it('matches inflections through MiniSearch, with the title boosted', () => {
    const index = new MiniSearch<{ id: string; title: string; text: string }>({
      fields: ['title', 'text'],
      tokenize: tokenizeEnglish,
      processTerm: analyzeEnglishTerm,
      searchOptions: { boost: { title: 2 } },
    });
    index.addAll([
      { id: 'body', title: 'Server setup', text: 'Replication of a primary to standbys' },
      { id: 'title', title: 'Replication', text: 'How a primary streams to standbys' },
    ]);
    expect(index.search('replicating').map((result) => result.id)).toEqual(['title', 'body']);
  });
});

function mode(name: string, overall: number, paraphrase: number): ModeReport {
  const metrics = (hit: number) => ({
    hit_at_1: hit,
    hit_at_5: hit,
    hit_at_10: hit,
    mrr_at_10: hit,
    ndcg_at_10: hit,
  });
  return {
    mode: name,
    questions: 10,
    failed: 0,
    metrics: metrics(overall),
    subsets: [{ field: 'style', value: 'paraphrase', questions: 4, metrics: metrics(paraphrase) }],
    latency_ms: { p50: 1, p99: 1, mean: 1 },
    server_ms: null,
    misses: [],
    errors: [],
  };
}

describe('best bm25', () => {
  it('takes the better baseline on each subset, not one baseline for all', () => {
    const report: EvaluationReport = {
      questions: 10,
      modes: [mode('bm25', 0.6, 0.5), mode('bm25-english', 0.7, 0.25)],
    };
    expect(betterBaseline(report, ['bm25', 'bm25-english'], {})?.mode).toBe('bm25-english');
    const best = bestBaselineReport(report, ['bm25', 'bm25-english']);
    expect(best?.mode).toBe('best bm25');
    expect(best?.metrics.hit_at_5).toBe(0.7);
    expect(best?.subsets[0]?.metrics.hit_at_5).toBe(0.5);
  });
});
