/**
 * npm run bench:vector-stability -- --reuse DATA_DIR [--questions FILE]
 *
 * Does a ranking depend only on the index contents? On a corpus bench:quality ingested (its
 * data dir, printed at the end of its run), the same questions are asked through the service
 * (POST /api/v1/chat/search/{vector,rrf}, limit 50, defaults) in three states of the same
 * index: with the HNSW index ingestion built, with no HNSW index (what search sees between an
 * execution's writes and the index build), and with the HNSW index dropped and built again
 * (HNSW draws random levels, so two builds are two different graphs). Prints per state hit@5
 * and MRR@10 over distinct pages, and how many questions got a different top 10 than in the
 * first state. Ends with the HNSW index built, as it was found.
 */
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { buildApp } from '../src/app.js';
import { openDatabase } from '../src/db/database.js';
import { evaluateRetrieval, type Retrieve } from '../src/evaluation/evaluate.js';
import { httpRetrieve } from '../src/evaluation/http-retrieve.js';
import { distinctDocuments, documentKey, type ResultSource } from '../src/evaluation/metrics.js';
import { parseQuestions } from '../src/evaluation/questions.js';
import { createKnowledgeIndex } from '../src/search-index/knowledge-index.js';
import { loadSettings } from '../src/settings.js';
import { abort, check, finish } from './lib/checks.js';

const { values } = parseArgs({
  options: {
    reuse: { type: 'string' },
    questions: { type: 'string', default: 'bench/questions/postgres-docs.jsonl' },
  },
});
if (!values.reuse) abort('--reuse DATA_DIR is required (a data dir bench:quality filled)');
const dataDir = values.reuse as string;
const questions = parseQuestions(await readFile(values.questions as string, 'utf8'));
const modes = ['vector', 'rrf'] as const;

const database = await openDatabase({ dataDir });
const app = await buildApp({ settings: loadSettings({ WEIR_DATA_DIR: dataDir }), database });
try {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const retrieve = httpRetrieve({ url, limit: 50 });
  const knowledge = createKnowledgeIndex(database.db);

  /** Each question's first ten distinct pages per mode, recorded while evaluating. */
  async function run(state: string) {
    const tops = new Map<string, string>();
    const recording: Retrieve = async (mode, question, signal) => {
      const retrieved = await retrieve(mode, question, signal);
      const top = distinctDocuments(retrieved.sources as ResultSource[])
        .slice(0, 10)
        .map(documentKey);
      tops.set(`${mode} ${question.id}`, top.join(' '));
      return retrieved;
    };
    const report = await evaluateRetrieval({ questions, modes, retrieve: recording });
    const figures = report.modes
      .map(
        (mode) =>
          `${mode.mode} hit@5 ${mode.metrics.hit_at_5.toFixed(3)} MRR@10 ${mode.metrics.mrr_at_10.toFixed(3)}`,
      )
      .join('; ');
    return { state, figures, tops };
  }

  async function dropVectorIndexes() {
    const models = await database.db
      .selectFrom('knowledge_models')
      .select(['model', 'vector_index'])
      .where('vector_index', 'is not', null)
      .execute();
    for (const { model, vector_index: name } of models) {
      await sql.raw(`drop index if exists ${name}`).execute(database.db);
      await database.db
        .updateTable('knowledge_models')
        .set({ vector_index: null })
        .where('model', '=', model)
        .execute();
    }
    check(models.length > 0, 'the corpus has no HNSW index to drop');
  }

  const states = [await run('HNSW built by ingestion')];
  await dropVectorIndexes();
  states.push(await run('no HNSW index (exact scan)'));
  const built = await knowledge.buildVectorIndexes();
  check(built.length > 0, 'no HNSW index was built again');
  states.push(await run('HNSW built again'));

  const [first] = states;
  console.log(`${questions.length} questions from ${values.questions}; data dir ${dataDir}\n`);
  console.log('| index state | figures | top 10 pages differ from the first state |\n|---|---|---|');
  for (const state of states) {
    const differing = modes.map((mode) => {
      const changed = questions.filter(
        (question) => state.tops.get(`${mode} ${question.id}`) !== first?.tops.get(`${mode} ${question.id}`),
      ).length;
      return `${mode} ${changed}`;
    });
    console.log(`| ${state.state} | ${state.figures} | ${differing.join(', ')} |`);
  }
} finally {
  await app.close();
  await database.close();
}
finish();
