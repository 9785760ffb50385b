import type { Migration } from './migration.js';

/**
 * Chat templates (spec 2.8, 4.4): a reusable chat configuration. Retrieval (`rag`) and
 * generation (`llm`) settings are jsonb so new knobs need no migration; tags are a text array
 * so the any-match filter is one `&&` with a GIN index.
 */
export const chatTemplates: Migration = {
  id: 7,
  name: 'chat-templates',
  statements: [
    `create table chat_templates (
       id uuid primary key,
       name text not null,
       description text,
       persona text,
       system_prompt text,
       rag jsonb not null default '{}',
       llm jsonb not null default '{}',
       owner_id text,
       is_public boolean not null default false,
       tags text[] not null default '{}',
       created_at timestamptz not null,
       updated_at timestamptz not null
     )`,
    'create index chat_templates_owner on chat_templates (owner_id)',
    'create index chat_templates_tags on chat_templates using gin (tags)',
  ],
};
