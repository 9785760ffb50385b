/**
 * Prometheus metrics (served at GET /metrics, docs/operations.md). One registry per process:
 * every part records into it through the small functions below, so no component needs a
 * metrics object passed in, and a process that holds several apps (tests) counts them together.
 *
 * Names follow Prometheus conventions (`weir_` prefix, `_total` counters, `_seconds`
 * histograms) and every label is bounded: route ids, stage names and adapter types come from
 * configs, HTTP routes are Fastify's patterns (never the raw URL), and no message, execution
 * or delivery id is ever a label.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry, prefix: 'weir_' });

/** Message work is milliseconds to minutes (a crawl, an LLM call). */
const WORK_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** Requests and statements: sub-millisecond to seconds. */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const messagesTotal = new Counter({
  name: 'weir_messages_total',
  help: 'Messages finished by a stage, by outcome (completed, failed, skipped).',
  labelNames: ['route', 'stage', 'adapter', 'status'] as const,
  registers: [metricsRegistry],
  collect: () => collectFinished(),
});
const messageSeconds = new Histogram({
  name: 'weir_message_processing_seconds',
  help: 'Time from a stage taking a message to recording its outcome.',
  labelNames: ['route', 'stage', 'adapter'] as const,
  buckets: WORK_BUCKETS,
  registers: [metricsRegistry],
});
const messagesInFlight = new Gauge({
  name: 'weir_messages_in_flight',
  help: 'Messages a stage holds (received, not yet acknowledged).',
  labelNames: ['route', 'stage', 'adapter'] as const,
  registers: [metricsRegistry],
  collect: () => collectInFlight(),
});
const executionsTotal = new Counter({
  name: 'weir_executions_total',
  help: 'Executions ended, by status (completed, failed, cancelled) and Weir outcome (succeeded, partial, failed, empty).',
  labelNames: ['status', 'outcome'] as const,
  registers: [metricsRegistry],
});
const webhookDeliveries = new Counter({
  name: 'weir_webhook_deliveries_total',
  help: 'Webhook delivery attempts by result: 2xx, 3xx, 4xx, 5xx, timeout or network_error.',
  labelNames: ['result'] as const,
  registers: [metricsRegistry],
});
const webhookSeconds = new Histogram({
  name: 'weir_webhook_delivery_seconds',
  help: 'Time from sending a webhook to its answer (or timeout).',
  labelNames: ['result'] as const,
  buckets: REQUEST_BUCKETS,
  registers: [metricsRegistry],
});
const httpSeconds = new Histogram({
  name: 'weir_http_request_duration_seconds',
  help: 'HTTP requests by method, route pattern and status code.',
  labelNames: ['method', 'route', 'status_code'] as const,
  buckets: REQUEST_BUCKETS,
  registers: [metricsRegistry],
});
const searchSeconds = new Histogram({
  name: 'weir_search_request_duration_seconds',
  help: 'Search and chat requests by mode (keyword, vector, rrf, chat, chat_stream) and status code.',
  labelNames: ['mode', 'status_code'] as const,
  buckets: REQUEST_BUCKETS,
  registers: [metricsRegistry],
});
const statementSeconds = new Histogram({
  name: 'weir_db_statement_duration_seconds',
  help: 'Database statements by kind (select, insert, update, delete, other) and result (ok, error), queueing included.',
  labelNames: ['statement', 'result'] as const,
  buckets: REQUEST_BUCKETS,
  registers: [metricsRegistry],
});

export interface StageLabels {
  route: string;
  stage: string;
  adapter: string;
}

export interface StageMetrics {
  finished(status: string, seconds: number): void;
  /** +1 when the stage takes a message, -1 when it lets go of it. */
  inFlight(change: 1 | -1): void;
}

/**
 * The recorders of one stage, with their label sets resolved once: a message costs a few
 * increments, not a label lookup each (the engine finishes tens of thousands a second).
 */
export function stageMetrics(labels: StageLabels): StageMetrics {
  const seconds = messageSeconds.labels(labels);
  const tally = stageTally(labels);
  return {
    finished(status, elapsed) {
      tally.finished.set(status, (tally.finished.get(status) ?? 0) + 1);
      seconds.observe(elapsed);
    },
    inFlight(change) {
      tally.inFlight += change;
    },
  };
}

/** A stage's counts since the last scrape (finished, by status) and its messages in hand. */
interface StageTally {
  labels: StageLabels;
  finished: Map<string, number>;
  inFlight: number;
}

/**
 * Every stage's tally, by its labels, shared by the processors of the same stage (one per
 * execution). A message changes two plain numbers here; the counter and the gauge read them
 * when scraped (collect). Recorded into prom-client per message, each change hashed its label
 * set again (a bound child hashes on every call): three hashes and their strings a message, on
 * the engine's busiest thread.
 */
const stageTallies = new Map<string, StageTally>();

function stageTally(labels: StageLabels): StageTally {
  const key = JSON.stringify([labels.route, labels.stage, labels.adapter]);
  let tally = stageTallies.get(key);
  if (!tally) {
    tally = { labels: { ...labels }, finished: new Map(), inFlight: 0 };
    stageTallies.set(key, tally);
  }
  return tally;
}

/** Moves the finished counts of every stage into weir_messages_total (its collect). */
function collectFinished(): void {
  for (const tally of stageTallies.values()) {
    for (const [status, count] of tally.finished) messagesTotal.inc({ ...tally.labels, status }, count);
    tally.finished.clear();
  }
}

/** Sets weir_messages_in_flight from every stage's tally (its collect). */
function collectInFlight(): void {
  for (const tally of stageTallies.values()) messagesInFlight.set(tally.labels, tally.inFlight);
}

export function recordExecutionEnded(status: string, outcome: string | null | undefined): void {
  executionsTotal.inc({ status, outcome: outcome ?? 'unknown' });
}

/** `status` is the HTTP status of the answer, absent for a timeout or a network error. */
export function recordWebhookAttempt(
  answer: { kind: 'response'; status: number } | { kind: 'timeout' | 'network_error' },
  seconds: number,
): void {
  const result = answer.kind === 'response' ? `${Math.floor(answer.status / 100)}xx` : answer.kind;
  webhookDeliveries.inc({ result });
  webhookSeconds.observe({ result }, seconds);
}

export function recordHttpRequest(method: string, route: string, statusCode: number, seconds: number): void {
  const status_code = String(statusCode);
  httpSeconds.observe({ method, route, status_code }, seconds);
  const mode = searchMode(method, route);
  if (mode) searchSeconds.observe({ mode, status_code }, seconds);
}

const SEARCH_ROUTE = /^\/api\/v1\/chat\/search\/(keyword|vector|rrf)$/;

function searchMode(method: string, route: string): string | undefined {
  if (method !== 'POST') return undefined;
  const search = SEARCH_ROUTE.exec(route);
  if (search) return search[1];
  if (route === '/api/v1/chat/complete') return 'chat';
  if (route === '/api/v1/chat/stream') return 'chat_stream';
  return undefined;
}

const statementRecorders = new Map<string, (seconds: number) => void>();

export function recordStatement(sqlText: string, seconds: number, failed: boolean): void {
  const key = `${statementKind(sqlText)} ${failed ? 'error' : 'ok'}`;
  let record = statementRecorders.get(key);
  if (!record) {
    const [statement, result] = key.split(' ') as [string, string];
    const child = statementSeconds.labels({ statement, result });
    record = (elapsed) => child.observe(elapsed);
    statementRecorders.set(key, record);
  }
  record(seconds);
}

const STATEMENT_KINDS = new Set(['select', 'insert', 'update', 'delete']);

/** The statement's first keyword; `with … insert` counts as other (its verb is further in). */
export function statementKind(sqlText: string): string {
  const first = /^\s*([a-z]+)/i.exec(sqlText)?.[1]?.toLowerCase() ?? 'other';
  return STATEMENT_KINDS.has(first) ? first : 'other';
}

/**
 * A gauge read when scraped (pool sizes, queued messages). Registering the same name again
 * replaces the reader, so the newest database or broker of the process is the one shown.
 */
export function registerReadingGauge(name: string, help: string, read: () => number): void {
  metricsRegistry.removeSingleMetric(name);
  new Gauge({
    name,
    help,
    registers: [metricsRegistry],
    collect() {
      this.set(read());
    },
  });
}

export function metricsText(): Promise<string> {
  return metricsRegistry.metrics();
}

export const metricsContentType = metricsRegistry.contentType;
