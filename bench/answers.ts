/**
 * npm run bench:answers -- [--reuse-docs DATA_DIR] [--reuse-postgres DATA_DIR] [--only weir-docs|postgres]
 *   [--split dev|test] [--quiet] [--diagnose]
 *
 * Offline answers against gold facts (issue 31): every question of
 * bench/questions/answers-weir-docs.jsonl and answers-postgres.jsonl (bench/questions/README-answers.md
 * says who wrote them) is asked through the real chat endpoint (POST /api/v1/chat/complete,
 * default request: the default `extractive` profile and retrieval strategy) and passes when the
 * answer contains any of its gold strings (bench/lib/answer-scoring.ts). Two corpora, each in
 * its own database as a user would have it:
 * - Weir's README.md and docs/, ingested by examples/weir-docs.yaml itself (in memory);
 * - the PostgreSQL 15 manual (/usr/share/doc/postgresql-doc-15/html), ingested as bench:quality
 *   does it (bench/lib/ingest-corpus.ts) into a data dir that --reuse-postgres takes back
 *   (--reuse-docs likewise; both only while the indexing code is unchanged).
 * Prints the pass rate overall, per set, per split and per kind, then every miss with its
 * answer (with --diagnose, why it missed: bench/lib/answer-diagnosis.ts). Exits 1 when the
 * overall rate is below 80%.
 * BENCH_BREAK=wrong-gold: each answer is checked against the next question's gold facts, as a
 * scorer or an answerer that mixes questions up would be, so the rate falls and it exits 1.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { type Database, openDatabase } from '../src/db/database.js';
import { loadSettings } from '../src/settings.js';
import { type Diagnosis, diagnoseMiss } from './lib/answer-diagnosis.js';
import {
  type AnswerOutcome,
  type AnswerQuestion,
  formatRate,
  matchedGold,
  parseAnswerQuestions,
  passRates,
} from './lib/answer-scoring.js';
import { benchBreak } from './lib/checks.js';
import { ingestCorpus, runTimed, startBenchEngine } from './lib/ingest-corpus.js';
import { serveDirectory } from './lib/serve-directory.js';

const { values } = parseArgs({
  options: {
    'reuse-postgres': { type: 'string' },
    'reuse-docs': { type: 'string' },
    only: { type: 'string' },
    split: { type: 'string' },
    corpus: { type: 'string', default: '/usr/share/doc/postgresql-doc-15/html' },
    quiet: { type: 'boolean', default: false },
    diagnose: { type: 'boolean', default: false },
  },
});
const TARGET = 0.8;
const wrongGold = benchBreak('wrong-gold');

interface Corpus {
  set: string;
  questionsFile: string;
  open(): Promise<{ database: Database; dataDir: string; note: string }>;
}

const corpora: Corpus[] = [
  {
    set: 'weir-docs',
    questionsFile: 'bench/questions/answers-weir-docs.jsonl',
    open: async () => {
      const reuse = values['reuse-docs'];
      if (reuse) return { database: await openDatabase({ dataDir: reuse }), dataDir: reuse, note: 'reused' };
      const dataDir = await mkdtemp(path.join(os.tmpdir(), 'weir-bench-answers-docs-'));
      // The example as `npm start` runs it: its root is the repository, read from here.
      const settings = loadSettings({ WEIR_DATA_DIR: dataDir });
      const engine = await startBenchEngine({ dataDir, settings });
      try {
        const run = await runTimed(engine, await readFile('examples/weir-docs.yaml', 'utf8'));
        await engine.vectorIndexes.whenIdle();
        if (run.outcome !== 'execution.completed') throw new Error(`weir-docs: ${run.outcome}`);
        return {
          database: engine.database,
          dataDir,
          note: `ingested in ${run.seconds.toFixed(1)} s; reuse with --reuse-docs ${dataDir}`,
        };
      } finally {
        await engine.orchestrator.stop();
      }
    },
  },
  {
    set: 'postgres',
    questionsFile: 'bench/questions/answers-postgres.jsonl',
    open: async () => {
      const reuse = values['reuse-postgres'];
      if (reuse) return { database: await openDatabase({ dataDir: reuse }), dataDir: reuse, note: 'reused' };
      const site = await serveDirectory(values.corpus);
      try {
        const dataDir = await mkdtemp(path.join(os.tmpdir(), 'weir-bench-answers-pg-'));
        console.error(`ingesting ${site.pages.length} pages of ${values.corpus} into ${dataDir}`);
        const run = await ingestCorpus({
          sitemapUrl: `${site.baseUrl}/sitemap.xml`,
          dataDir,
          settings: loadSettings({ WEIR_DATA_DIR: dataDir, WEIR_FETCH_ALLOWED_CIDRS: '127.0.0.0/8' }),
        });
        return {
          database: run.database,
          dataDir,
          note: `ingested in ${run.seconds.toFixed(1)} s; reuse with --reuse-postgres ${dataDir}`,
        };
      } finally {
        await site.close();
      }
    },
  },
];

async function ask(app: FastifyInstance, question: AnswerQuestion): Promise<{ answer: string; ms: number }> {
  const started = performance.now();
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/chat/complete',
    payload: { query: question.question },
  });
  const ms = performance.now() - started;
  if (response.statusCode !== 200) return { answer: `HTTP ${response.statusCode}: ${response.body}`, ms };
  const body = response.json() as { answer: string; provider: string };
  if (body.provider !== 'extractive') throw new Error(`answered by ${body.provider}, not extractive`);
  return { answer: body.answer, ms };
}

const outcomes: AnswerOutcome[] = [];
const diagnoses = new Map<AnswerOutcome, Diagnosis>();
for (const corpus of corpora) {
  if (values.only && values.only !== corpus.set) continue;
  const questions = parseAnswerQuestions(
    await readFile(corpus.questionsFile, 'utf8'),
    corpus.questionsFile,
  ).filter((question) => !values.split || question.split === values.split);
  const { database, dataDir, note } = await corpus.open();
  const app = await buildApp({ settings: loadSettings({ WEIR_DATA_DIR: dataDir }), database });
  try {
    console.log(`${corpus.set}: ${questions.length} questions from ${corpus.questionsFile}; ${note}`);
    for (const [position, question] of questions.entries()) {
      const { answer, ms } = await ask(app, question);
      const gold = wrongGold
        ? (questions[(position + 1) % questions.length] as AnswerQuestion).gold
        : question.gold;
      const outcome = {
        set: corpus.set,
        question,
        answer,
        passed: matchedGold(answer, gold) !== undefined,
        ms,
      };
      outcomes.push(outcome);
      if (values.diagnose && !outcome.passed)
        diagnoses.set(outcome, await diagnoseMiss(app, database, question));
    }
  } finally {
    await app.close();
    await database.close();
  }
}

const rates = passRates(outcomes);
console.log('\n### pass rates (an answer passes when it holds a gold string)\n');
for (const rate of rates) console.log(`- ${formatRate(rate)}`);
const times = outcomes.map((outcome) => outcome.ms).sort((a, b) => a - b);
console.log(
  `- answer time p50 ${times[Math.floor(times.length / 2)]?.toFixed(0)} ms, max ${times.at(-1)?.toFixed(0)} ms`,
);
if (!values.quiet) {
  console.log('\n### misses\n');
  for (const miss of outcomes.filter((outcome) => !outcome.passed)) {
    const diagnosis = diagnoses.get(miss);
    if (diagnosis) console.log(`- ${miss.question.id}: ${diagnosis.cause}: ${diagnosis.detail}`);
    console.log(
      `- ${miss.question.id} (${miss.set}, ${miss.question.split}, ${miss.question.kind}) ${miss.question.question}\n` +
        `  gold: ${JSON.stringify(miss.question.gold)}\n` +
        `  answer: ${miss.answer.replace(/\n/g, '\n          ')}`,
    );
  }
}
const overall = rates.find((rate) => rate.label === 'overall');
const share = overall && overall.total > 0 ? overall.passed / overall.total : 0;
console.log(`\noverall ${(100 * share).toFixed(1)}% against a target of ${100 * TARGET}%`);
if (share < TARGET) process.exitCode = 1;
