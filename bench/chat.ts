/**
 * npm run bench:chat -- [requests=200]
 * The service's own overhead on POST /chat/stream: time from sending the request to the
 * `sources` event (configuration + retrieval) and to the first `text` event (+ prompt and the
 * upstream round trip), with the local OpenAI-compatible server answering instantly. Embedded
 * defaults (PGlite, hash embedder, ensemble = RRF retrieval) over the test fixture corpus.
 * Baseline, in the same run: the same question streamed from that server directly (time to its
 * first chunk), so what Weir adds is the difference.
 *
 * Checked on every request (exit 1 otherwise): the stream completes, its `sources` event cites
 * both fixture pages the question asks about (pipelines, vacuum), and its text is the model's
 * answer, whole. Every request is bounded by BENCH_TIMEOUT_S (30 s).
 */
import os from 'node:os';
import { buildApp } from '../src/app.js';
import { openDatabase } from '../src/db/database.js';
import { loadSettings } from '../src/settings.js';
import { seedKnowledgeFixture } from '../test/helpers/knowledge-fixture.js';
import { startLlmServer } from '../test/helpers/llm-server.js';
import { benchBreak, check, finish } from './lib/checks.js';

const requests = Number(process.argv[2] ?? 200);
const requestTimeoutMs = Number(process.env.BENCH_TIMEOUT_S ?? 30) * 1000;
/** The pages the question asks about: retrieval must cite both. */
const expectedSources = ['https://docs.example.org/pipelines', 'https://docs.example.org/vacuum'];
/** BENCH_BREAK=empty-index: the fixture corpus is not indexed, so retrieval finds no source. */
const emptyIndex = benchBreak('empty-index');

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

const llm = await startLlmServer();
const database = await openDatabase({});
if (!emptyIndex) await seedKnowledgeFixture(database);
const settings = loadSettings(
  {},
  {
    llm_profiles: [
      { name: 'local', provider: 'openai', base_url: llm.baseUrl, model: 'bench', timeout_ms: 10_000 },
    ],
  },
);
const app = await buildApp({ settings, database });
const address = await app.listen({ port: 0, host: '127.0.0.1' });

/** The events of a server-sent event stream, by name, in order. */
function eventsOf(stream: string): { event: string; data: string }[] {
  return stream
    .split('\n\n')
    .map((block) => ({
      event: /^event: (.*)$/m.exec(block)?.[1] ?? '',
      data: /^data: (.*)$/m.exec(block)?.[1] ?? '',
    }))
    .filter((entry) => entry.event !== '');
}

/** Whether a streamed chat answer is what was asked for; records a failed check once per kind. */
const failedKinds = new Set<string>();
let failedAnswers = 0;
function checkAnswer(received: string): void {
  const events = eventsOf(received);
  const sources = events.find((entry) => entry.event === 'sources')?.data ?? '';
  const text = events
    .filter((entry) => entry.event === 'text')
    .map((entry) => (JSON.parse(entry.data) as { content: string }).content)
    .join('');
  const problems = [
    received.includes('"completed":true') ? '' : `stream did not complete: ${received.slice(-200)}`,
    expectedSources.every((url) => sources.includes(url))
      ? ''
      : `sources do not cite ${expectedSources.join(' and ')}: ${sources.slice(0, 200)}`,
    text === llm.answer ? '' : `text is not the model's answer: ${JSON.stringify(text.slice(0, 200))}`,
  ].filter(Boolean);
  for (const problem of problems) {
    const kind = problem.slice(0, 20);
    if (!failedKinds.has(kind)) check(false, problem);
    failedKinds.add(kind);
  }
  failedAnswers += problems.length > 0 ? 1 : 0;
}

async function once(): Promise<{ sources: number; text: number }> {
  const started = performance.now();
  const response = await fetch(`${address}/api/v1/chat/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'How do I run a pipeline and what does vacuum reclaim?' }),
    signal: AbortSignal.timeout(requestTimeoutMs),
  });
  check(response.status === 200, `POST /chat/stream answered ${response.status}`);
  const decoder = new TextDecoder();
  let received = '';
  let sources = Number.NaN;
  let text = Number.NaN;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    received += decoder.decode(chunk, { stream: true });
    if (Number.isNaN(sources) && received.includes('event: sources\n')) sources = performance.now() - started;
    if (Number.isNaN(text) && received.includes('event: text\n')) text = performance.now() - started;
  }
  checkAnswer(received);
  return { sources, text };
}

/** The baseline: the model server asked directly, time to its first streamed chunk. */
async function direct(): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${llm.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'bench',
      stream: true,
      messages: [{ role: 'user', content: 'How do I run a pipeline and what does vacuum reclaim?' }],
    }),
    signal: AbortSignal.timeout(requestTimeoutMs),
  });
  let first = Number.NaN;
  let received = '';
  const decoder = new TextDecoder();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    if (Number.isNaN(first)) first = performance.now() - started;
    received += decoder.decode(chunk, { stream: true });
  }
  check(received.includes('[DONE]'), 'the model server did not finish its stream');
  return first;
}

for (let index = 0; index < 20; index++) {
  await once(); // warm-up
  await direct();
}
const results: { sources: number; text: number }[] = [];
const baseline: number[] = [];
for (let index = 0; index < requests; index++) {
  results.push(await once());
  baseline.push(await direct());
}
console.log(
  `machine: ${os.cpus()[0]?.model ?? 'unknown'} x${os.cpus().length}, node ${process.version}; ${requests} sequential requests`,
);
console.log('| measure | p50 ms | p99 ms |');
console.log('|---|---|---|');
for (const key of ['sources', 'text'] as const) {
  const values = results.map((result) => result[key]);
  console.log(
    `| to first \`${key}\` event | ${percentile(values, 50).toFixed(2)} | ${percentile(values, 99).toFixed(2)} |`,
  );
}
console.log(
  `| baseline: the model server directly, to its first chunk | ${percentile(baseline, 50).toFixed(2)} | ${percentile(baseline, 99).toFixed(2)} |`,
);
const textP50 = percentile(
  results.map((result) => result.text),
  50,
);
console.log(`first text p50 / baseline p50: ${(textP50 / percentile(baseline, 50)).toFixed(2)}`);
console.log(
  `check: ${requests + 20 - failedAnswers} of ${requests + 20} answers complete, citing both pages, with the model's text`,
);
await app.close();
await database.close();
await llm.close();
finish();
