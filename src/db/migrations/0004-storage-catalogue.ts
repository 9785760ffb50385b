import type { Migration } from './migration.js';

/**
 * The object catalogue: one row per stored object (the sidecar's content plus the pipeline
 * fields used as filters), so listing never reads sidecars from storage (spec 4.8).
 */
export const storageCatalogue: Migration = {
  id: 4,
  name: 'storage-catalogue',
  statements: [
    `create table storage_objects (
       key text primary key,
       size bigint not null,
       content_type text not null,
       sha256 text not null,
       created_at timestamptz not null,
       metadata jsonb not null default '{}',
       execution_id text,
       stage text,
       route_id text,
       correlation_id text,
       extension text not null default ''
     )`,
    // text_pattern_ops: `key like 'prefix%'` uses the index whatever the collation.
    'create index storage_objects_key_prefix on storage_objects (key text_pattern_ops)',
    'create index storage_objects_execution on storage_objects (execution_id)',
  ],
};
