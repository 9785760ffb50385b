import type { Migration } from './migration.js';

/**
 * The knowledge index that search and chat read (issue 4, spec 4.3): documents, their
 * segments with a full-text vector in the segment's own language, and embeddings per model.
 *
 * One schema on PGlite and on a PostgreSQL server: vectors are stored as `real[]`, and where
 * pgvector is installed each model gets an HNSW expression index on `embedding::vector(n)`
 * (created by the knowledge index when a model first writes, since only then is `n` known).
 * A server without pgvector keeps every vector; only vector search is refused, with a message.
 */
export const knowledgeIndex: Migration = {
  id: 5,
  name: 'knowledge-index',
  statements: [
    `do $$ begin
       if exists (select 1 from pg_available_extensions where name = 'vector') then
         create extension if not exists vector;
       end if;
     end $$`,
    `create table knowledge_documents (
       document_id uuid primary key,
       source_key text not null unique,
       url text,
       title text,
       language text not null,
       storage_key text,
       front_matter jsonb not null default '{}',
       execution_id text not null,
       route_id text,
       created_at timestamptz not null,
       updated_at timestamptz not null
     )`,
    `create table knowledge_segments (
       segment_id uuid primary key,
       document_id uuid not null references knowledge_documents (document_id) on delete cascade,
       segment_index integer not null,
       text text not null,
       token_count integer not null,
       heading_path jsonb not null default '[]',
       language text not null,
       search_vector tsvector not null,
       execution_id text not null,
       updated_at timestamptz not null,
       unique (document_id, segment_index)
     )`,
    'create index knowledge_segments_search on knowledge_segments using gin (search_vector)',
    'create index knowledge_segments_execution on knowledge_segments (execution_id)',
    `create table knowledge_embeddings (
       segment_id uuid not null references knowledge_segments (segment_id) on delete cascade,
       model text not null,
       dimensions integer not null,
       embedding real[] not null,
       vector_storage_key text,
       execution_id text not null,
       updated_at timestamptz not null,
       primary key (segment_id, model)
     )`,
    'create index knowledge_embeddings_execution on knowledge_embeddings (execution_id, model)',
    /** One row per model that has written vectors: its dimension count and whether it has an HNSW index. */
    `create table knowledge_models (
       model text primary key,
       dimensions integer not null,
       vector_index text,
       created_at timestamptz not null
     )`,
  ],
};
