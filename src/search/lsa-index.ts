/**
 * The corpus LSA beside the keyword index (issue 34; off unless WEIR_SEARCH_LSA=on): the
 * segments' LSA vectors (lsa-model.ts), built on a worker thread (lsa-worker.ts) from the
 * database, and the LSA ranking of a question, which RRF fuses as a third list
 * (search-service.ts).
 *
 * A ranking must depend only on the index contents, so the vectors are used only while they
 * are those of the segments the database holds: a write this process makes (segment-changes.ts)
 * makes them stale at once, and searches go without the LSA list (saying so in their
 * parameters) until a new build ends. Builds start on the first search, after an execution
 * ends (`debounceMs` later, so a burst of ends makes one build), and `quietMs` after the last
 * segment change (a document deleted through the API ends no execution). An execution's end
 * also compares the segments' count, token sum and last update with the build's, which catches
 * writes other processes made. A build never blocks a request: the database is read in
 * batches, and the matrix and SVD run on the worker, which ends with the build, so its memory
 * goes with it; what stays is the vectors (Float32, segments x rank and terms x rank).
 */
import type { Worker } from 'node:worker_threads';
import { type Kysely, sql } from 'kysely';
import type { DatabaseSchema } from '../db/schema.js';
import type { EventBus } from '../events/event-bus.js';
import { startModuleWorker } from '../runtime/module-worker.js';
import { onSegmentsChanged } from '../search-index/segment-changes.js';
import type { KeywordFilters } from './keyword-sql.js';
import { type LsaListOutcome, type LsaListRequest, lsaList } from './lsa-list.js';
import {
  compareLsaSegments,
  foldIn,
  type LsaModel,
  type LsaText,
  lsaDefaults,
  lsaRanking,
} from './lsa-model.js';

/** Why a search went without the LSA list, or `ready`. */
export type LsaState = 'ready' | 'building' | 'stale' | 'failed' | 'empty';

export interface LsaHit {
  segmentId: string;
  /** Cosine similarity to the question after feedback. */
  score: number;
}

export interface LsaBuild {
  segments: number;
  terms: number;
  rank: number;
  /** Reading the segments, on the service's thread. */
  readMs: number;
  /** The worker's CPU time (matrix and SVD) and its wall time. */
  workerCpuMs: number;
  workerMs: number;
  /** What the vectors and the look-ups keep in memory, estimated. */
  bytes: number;
}

export interface LsaIndex {
  /**
   * The `depth` segments nearest the question's terms plus the mean of the `feedback`
   * segments' vectors (the keyword ranking's first), within the filters; or the state that
   * kept it from ranking.
   */
  rank(
    question: { terms: ReadonlyMap<string, number>; feedback: readonly string[] },
    filters: KeywordFilters,
    depth: number,
  ): { state: 'ready'; hits: LsaHit[] } | { state: Exclude<LsaState, 'ready'> };
  state(): LsaState;
  /** The state, after starting the first build if none was started (a search calls it, so idle start-up builds nothing). */
  prepare(): LsaState;
  /** Starts a build when none was made; resolves when it and those already due have ended. */
  ready(): Promise<void>;
  /** The last build's figures, undefined before one ended. */
  lastBuild(): LsaBuild | undefined;
  /** RRF's third list for a search (lsa-list.ts); a method, so the search service imports no LSA code. */
  list(request: LsaListRequest): Promise<LsaListOutcome>;
  /** Stops listening and cancels a pending build. */
  close(): void;
}

export interface LsaIndexOptions {
  /** The SVD's rank (lsaDefaults.rank); small fixtures need a small one. */
  rank?: number;
  debounceMs?: number;
  quietMs?: number;
  /** Told when a build fails (the index says `failed` until the next one). */
  onError?: (error: unknown) => void;
}

const READ_BATCH = 2000;

interface Built {
  model: LsaModel;
  segmentIds: string[];
  position: Map<string, number>;
  executionIds: string[];
  languages: string[];
}

/** The change count and the database's fingerprint when a build read the segments. */
interface Source {
  changes: number;
  fingerprint: string;
}

export function createLsaIndex(
  db: Kysely<DatabaseSchema>,
  events: EventBus | undefined,
  options: LsaIndexOptions = {},
): LsaIndex {
  const rank = options.rank ?? lsaDefaults.rank;
  const debounceMs = options.debounceMs ?? 1000;
  const quietMs = options.quietMs ?? 5000;
  let built: Built | undefined;
  /** What the last build that ended read; its model is `built`, or none when the corpus had no shared term. */
  let source: Source | undefined;
  let failed = false;
  let last: LsaBuild | undefined;
  /** Segment changes heard in this process. */
  let changes = 0;
  let running: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let worker: Worker | undefined;

  const unsubscribeChanges = onSegmentsChanged(db, () => {
    changes++;
    schedule(quietMs);
  });
  const unsubscribeEvents = events?.subscribe((event) => {
    if (
      event.type === 'execution.completed' ||
      event.type === 'execution.failed' ||
      event.type === 'execution.cancelled'
    )
      schedule(debounceMs);
  });

  function schedule(delay: number) {
    if (closed) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      void build();
    }, delay);
    timer.unref();
  }

  function build(): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await buildOnce();
          failed = false;
        } catch (error) {
          failed = true;
          if (!closed) options.onError?.(error);
        }
      } while (again && !closed);
      running = undefined;
    })();
    return running;
  }

  async function buildOnce(): Promise<void> {
    const read: Source = { changes, fingerprint: await fingerprintOf(db) };
    if (source && source.changes === read.changes && source.fingerprint === read.fingerprint) return;
    const started = performance.now();
    const rows = await readSegments(db);
    const readMs = performance.now() - started;
    const texts: LsaText[] = rows.map((row) => ({
      title: row.title,
      headings: headingsOf(row),
      text: row.text,
    }));
    const workerStarted = performance.now();
    if (closed) return;
    const result = await buildOnWorker(texts, rank, (started) => {
      worker = started;
    }).finally(() => {
      worker = undefined;
    });
    if (closed) return;
    const workerMs = performance.now() - workerStarted;
    source = read;
    if (!result.model) {
      built = undefined;
      return;
    }
    const segmentIds = rows.map((row) => row.segment_id);
    built = {
      model: result.model,
      segmentIds,
      position: new Map(segmentIds.map((id, i) => [id, i])),
      executionIds: rows.map((row) => row.execution_id),
      languages: rows.map((row) => row.language),
    };
    last = figuresOf(result.model, rows.length, { readMs, workerCpuMs: result.cpuMs, workerMs });
  }

  function state(): LsaState {
    if (failed) return 'failed';
    if (!source) return 'building';
    if (source.changes !== changes) return 'stale';
    return built ? 'ready' : 'empty';
  }

  const index: LsaIndex = {
    state,
    list: (request) => lsaList({ ...request, index }),
    lastBuild: () => last,
    ready: () => running ?? (source ? Promise.resolve() : build()),
    prepare() {
      if (!source && !running && !failed) void build();
      return state();
    },
    close() {
      closed = true;
      void worker?.terminate();
      if (timer) clearTimeout(timer);
      unsubscribeChanges();
      unsubscribeEvents?.();
    },
    rank(question, filters, depth) {
      const now = state();
      if (now !== 'ready' || !built) return { state: now === 'ready' ? 'empty' : now };
      return { state: 'ready', hits: rankBuilt(built, question, filters, depth) };
    },
  };
  return index;
}

/** The LSA ranking over a build's vectors, within the filters (lsa-model.ts). */
function rankBuilt(
  b: Built,
  question: { terms: ReadonlyMap<string, number>; feedback: readonly string[] },
  filters: KeywordFilters,
  depth: number,
): LsaHit[] {
  const feedback = question.feedback.flatMap((id) => {
    const i = b.position.get(id);
    return i === undefined ? [] : [i];
  });
  const executions = filters.executionIds ? new Set(filters.executionIds) : undefined;
  const language = filters.language;
  const accept =
    executions || language
      ? (i: number) =>
          (!executions || executions.has(b.executionIds[i] as string)) &&
          (!language || b.languages[i] === language)
      : undefined;
  const hits = lsaRanking(b.model, foldIn(b.model, question.terms), feedback, {
    depth,
    feedbackWeight: lsaDefaults.feedbackWeight,
    accept,
  });
  return hits.map((h) => ({ segmentId: b.segmentIds[h.segment] as string, score: h.score }));
}

/** A build's figures; the memory is the arrays plus about 100 bytes a map entry or id string. */
function figuresOf(
  m: LsaModel,
  segments: number,
  times: { readMs: number; workerCpuMs: number; workerMs: number },
): LsaBuild {
  const bytes =
    m.termVectors.byteLength +
    m.segmentVectors.byteLength +
    m.idf.byteLength +
    (m.terms.size + 3 * segments) * 100;
  return { segments, terms: m.terms.size, rank: m.rank, ...times, bytes };
}

interface SegmentRow {
  segment_id: string;
  source_key: string;
  segment_index: number;
  text: string;
  heading_path: string[] | string;
  title: string | null;
  language: string;
  execution_id: string;
}

/** Every segment with its page's title and source key, read in id order (batches), sorted as the matrix wants them. */
async function readSegments(db: Kysely<DatabaseSchema>): Promise<SegmentRow[]> {
  const rows: SegmentRow[] = [];
  let after: string | undefined;
  for (;;) {
    const batch = (
      await sql<SegmentRow>`
        select s.segment_id, d.source_key, s.segment_index, s.text, s.heading_path, d.title, s.language, s.execution_id
        from knowledge_segments s join knowledge_documents d on d.document_id = s.document_id
        ${after === undefined ? sql`` : sql`where s.segment_id > ${after}::uuid`}
        order by s.segment_id limit ${READ_BATCH}`.execute(db)
    ).rows;
    rows.push(...batch);
    if (batch.length < READ_BATCH) return rows.sort(compareLsaSegments);
    after = batch[batch.length - 1]?.segment_id;
  }
}

/** What changes when any segment is written, re-written or deleted, by any process. */
async function fingerprintOf(db: Kysely<DatabaseSchema>): Promise<string> {
  const row = (
    await sql<{ n: string; tokens: string | null; updated: Date | string | null }>`
      select count(*)::text as n, sum(token_count)::text as tokens, max(updated_at) as updated
      from knowledge_segments`.execute(db)
  ).rows[0];
  const updated = row?.updated instanceof Date ? row.updated.toISOString() : String(row?.updated ?? '');
  return `${row?.n}:${row?.tokens ?? 0}:${updated}`;
}

function headingsOf(row: SegmentRow): string[] {
  const path = typeof row.heading_path === 'string' ? JSON.parse(row.heading_path) : row.heading_path;
  return Array.isArray(path) ? path : [];
}

interface WorkerModel {
  rank: number;
  terms: string;
  idf: Float64Array;
  termVectors: Float32Array;
  segmentVectors: Float32Array;
}

/** Builds on a worker; `started` is handed the worker, so closing the index can stop a build. */
function buildOnWorker(
  segments: LsaText[],
  rank: number,
  started: (worker: Worker) => void,
): Promise<{ model: LsaModel | undefined; cpuMs: number }> {
  return new Promise((resolve, reject) => {
    const worker = startModuleWorker('search/lsa-worker', { workerData: { segments, rank } });
    started(worker);
    // A build in progress never keeps the process from exiting.
    worker.unref();
    worker.once('message', (message: { model: WorkerModel | undefined; cpuMs: number }) => {
      void worker.terminate();
      const m = message.model;
      resolve({
        cpuMs: message.cpuMs,
        model: m && {
          rank: m.rank,
          terms: new Map(m.terms.split('\n').map((t, i) => [t, i])),
          idf: m.idf,
          termVectors: m.termVectors,
          segmentVectors: m.segmentVectors,
        },
      });
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the LSA worker exited with code ${code}`)));
  });
}
