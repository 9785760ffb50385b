/**
 * What "the vector index is ready" means for bench:ingest (issue 35): a search at its defaults,
 * asked as the run ends, ranks the new segments exactly. Measured by asking: the moment the
 * execution ends, vector searches go through the search service as the embedded service builds
 * it (the in-memory index on PGlite, whose fill the first search starts), one after another;
 * then the same searches once memory holds every vector; each answer is compared, rank by rank
 * and score by score, with the statement that scores every vector. Any difference fails the
 * bench. The HNSW graph (src/engine/vector-index-builds.ts) is not part of readiness: on PGlite
 * it is built at the first quiet moment after, and the bench reports when.
 */
import type { Database } from '../../src/db/database.js';
import type { EmbedderCatalog } from '../../src/embedding/embedder.js';
import { createKeywordMemoryIndex } from '../../src/search/keyword-memory-index.js';
import { createSearchService, type SearchService } from '../../src/search/search-service.js';
import { check } from './checks.js';

/** Questions whose answers lie in the PostgreSQL manual; any text works for the comparison. */
const questions = [
  'vacuum dead tuples',
  'create index concurrently',
  'streaming replication standby',
  'row level security policy',
  'json operators and functions',
];

export interface SearchReadiness {
  /** Seconds from the run request until the first search's answer (exact), and until every question's. */
  firstAnswerSeconds: number;
  allAnsweredSeconds: number;
  /** Seconds from the run request until memory held every vector (PGlite; the run's end on a server). */
  memorySeconds: number;
  /** How the first answers ranked (parameters.vector_ranking), e.g. `exact` or `memory`. */
  firstRanking: string;
  /** Answers that differed from the exact statement's. */
  differing: number;
  /** The server has no pgvector: no vector search to measure. */
  unavailable: boolean;
}

export async function measureSearchReadiness(
  database: Database,
  embedders: EmbedderCatalog,
  startedAt: number,
): Promise<SearchReadiness> {
  const keywordIndex = database.kind === 'pglite' ? createKeywordMemoryIndex(database.db) : undefined;
  const service = createSearchService({ db: database.db, embedders, keywordIndex });
  const since = () => (performance.now() - startedAt) / 1000;
  const first: Array<Awaited<ReturnType<SearchService['search']>>> = [];
  let firstAnswerSeconds = 0;
  try {
    for (const query of questions) {
      first.push(await service.search('vector', { query }));
      if (first.length === 1) firstAnswerSeconds = since();
    }
  } catch (error) {
    if ((error as { code?: string }).code !== 'vector_search_unavailable') throw error;
    return {
      firstAnswerSeconds: 0,
      allAnsweredSeconds: 0,
      memorySeconds: 0,
      firstRanking: 'none',
      differing: 0,
      unavailable: true,
    };
  }
  const allAnsweredSeconds = since();
  await keywordIndex?.ready();
  const memorySeconds = since();
  const later = [];
  for (const query of questions) later.push(await service.search('vector', { query }));
  // The reference: every vector scored by the statement (no memory, no graph).
  const exact = createSearchService({
    db: database.db,
    embedders,
    exactVectorLimit: Number.POSITIVE_INFINITY,
  });
  let differing = 0;
  for (const [position, query] of questions.entries()) {
    const reference = fingerprint(await exact.search('vector', { query }));
    for (const answer of [first[position], later[position]])
      if (answer && fingerprint(answer) !== reference) differing++;
  }
  check(differing === 0, `${differing} vector answers after the run differ from the exact ranking`);
  return {
    firstAnswerSeconds,
    allAnsweredSeconds,
    memorySeconds,
    firstRanking: String(first[0]?.parameters.vector_ranking),
    differing,
    unavailable: false,
  };
}

function fingerprint(response: Awaited<ReturnType<SearchService['search']>>): string {
  return JSON.stringify(response.results.map((result) => [result.segment_id, result.score]));
}

export function describeReadiness(readiness: SearchReadiness, endSeconds: number): string {
  if (readiness.unavailable) return 'vector search: none (no pgvector on this server)';
  const after = (seconds: number) => `+${(seconds - endSeconds).toFixed(2)} s`;
  return (
    `vector search after the run's end: first answer ${after(readiness.firstAnswerSeconds)} (${readiness.firstRanking}), ` +
    `${questions.length} answered ${after(readiness.allAnsweredSeconds)}, from memory ${after(readiness.memorySeconds)}; ` +
    `${readiness.differing} of ${questions.length * 2} answers differ from the exact ranking`
  );
}
