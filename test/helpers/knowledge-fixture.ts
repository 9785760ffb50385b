/**
 * A small indexed corpus for search and chat tests, written straight through the knowledge
 * index write API (no ingestion pipeline): English and Norwegian pages in two executions and
 * one document known only by its object key, embedded with the offline hash embedder.
 */
import { uuidv7 } from 'uuidv7';
import type { Database } from '../../src/db/database.js';
import type { Embedder } from '../../src/embedding/embedder.js';
import { createHashEmbedder } from '../../src/embedding/hash-embedder.js';
import { createKnowledgeIndex } from '../../src/search-index/knowledge-index.js';
import type { SearchLanguage } from '../../src/search-index/language.js';

interface FixtureDocument {
  key: string;
  url?: string;
  storageKey?: string;
  title: string;
  language: SearchLanguage;
  execution: 'docs' | 'norsk';
  segments: { name: string; text: string; headings: string[] }[];
}

export const fixtureDocuments: FixtureDocument[] = [
  {
    key: 'https://docs.example.org/pipelines',
    url: 'https://docs.example.org/pipelines',
    title: 'Pipelines',
    language: 'english',
    execution: 'docs',
    segments: [
      {
        name: 'run',
        text: 'To run a pipeline, store its config and call run. Each run creates an execution with its own id.',
        headings: ['Pipelines', 'Run a pipeline'],
      },
      {
        name: 'retry',
        text: 'Failed messages are retried with exponential backoff until the retry budget is spent.',
        headings: ['Pipelines', 'Retries'],
      },
    ],
  },
  {
    key: 'https://docs.example.org/vacuum',
    url: 'https://docs.example.org/vacuum',
    title: 'Routine vacuuming',
    language: 'english',
    execution: 'docs',
    segments: [
      {
        name: 'vacuum',
        text: 'VACUUM reclaims storage occupied by dead tuples. Autovacuum daemons vacuum tables automatically.',
        headings: ['Maintenance', 'Vacuum'],
      },
      {
        name: 'index',
        text: 'A B-tree index speeds up equality and range queries on sorted data.',
        headings: ['Indexes'],
      },
    ],
  },
  {
    key: 'https://nn.example.no/biler',
    url: 'https://nn.example.no/biler',
    title: 'Om biler',
    language: 'norwegian',
    execution: 'norsk',
    segments: [
      {
        name: 'bil',
        text: 'En bil er et kjøretøy med fire hjul og en motor. Hver bil trenger forsikring.',
        headings: ['Kjøretøy'],
      },
      {
        name: 'sykkel',
        text: 'Sykkelen har to hjul og trenger ingen motor eller forsikring.',
        headings: ['Kjøretøy', 'Sykkel'],
      },
    ],
  },
  {
    key: 'files/handbook/onboarding.md',
    storageKey: 'files/handbook/onboarding.md',
    title: 'Onboarding handbook',
    language: 'english',
    execution: 'norsk',
    segments: [
      {
        name: 'onboarding',
        text: 'New engineers get a laptop, an account and a mentor during their first week.',
        headings: ['Onboarding'],
      },
    ],
  },
];

export interface KnowledgeFixture {
  executions: { docs: string; norsk: string };
  /** Segment id by fixture name (run, retry, vacuum, index, bil, sykkel, onboarding). */
  segments: Record<string, string>;
  embedder: Embedder;
}

export async function seedKnowledgeFixture(
  database: Database,
  options: { embedder?: Embedder } = {},
): Promise<KnowledgeFixture> {
  const embedder = options.embedder ?? createHashEmbedder();
  const index = createKnowledgeIndex(database.db);
  const executions = { docs: uuidv7(), norsk: uuidv7() };
  const segments: Record<string, string> = {};
  for (const document of fixtureDocuments) {
    const executionId = executions[document.execution];
    const documentId = await index.upsertDocument({
      sourceKey: document.key,
      url: document.url,
      storageKey: document.storageKey,
      title: document.title,
      language: document.language,
      executionId,
    });
    const ids = await index.upsertSegments(
      documentId,
      document.segments.map((segment, segmentIndex) => ({
        segmentIndex,
        text: segment.text,
        tokenCount: segment.text.split(/\s+/).length,
        headingPath: segment.headings,
      })),
      { executionId, total: document.segments.length },
    );
    document.segments.forEach((segment, position) => {
      segments[segment.name] = ids[position] as string;
    });
    // A server without pgvector still stores vectors (real[]); search refuses to use them.
    const vectors = await embedder.embed(document.segments.map((segment) => segment.text));
    await index.upsertEmbeddings(
      ids.map((segmentId, position) => ({
        segmentId,
        model: embedder.name,
        vector: vectors[position] as Float32Array,
        executionId,
      })),
    );
  }
  // As the engine does when an execution that wrote vectors ends.
  await index.buildVectorIndexes();
  return { executions, segments, embedder };
}
