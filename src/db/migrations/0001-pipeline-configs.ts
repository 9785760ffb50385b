import type { Migration } from './migration.js';

export const pipelineConfigs: Migration = {
  id: 1,
  name: 'pipeline-configs',
  statements: [
    `create table pipeline_configs (
       id uuid primary key,
       name text not null,
       description text,
       origin text not null default 'api',
       config_yaml text not null,
       config_hash text not null,
       version integer not null default 1,
       is_active boolean not null default true,
       created_at timestamptz not null,
       updated_at timestamptz not null,
       deleted_at timestamptz
     )`,
    'create index pipeline_configs_active_created on pipeline_configs (created_at, id) where is_active',
    // One active config per pipeline file, so a file sync from two instances cannot double it.
    `create unique index pipeline_configs_active_file_origin on pipeline_configs (origin)
       where is_active and origin like 'file:%'`,
  ],
};
