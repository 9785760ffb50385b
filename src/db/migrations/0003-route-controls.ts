import type { Migration } from './migration.js';

/** Route state set through the pipelines API, shared by every instance (spec 3.3, 4.6). */
export const routeControls: Migration = {
  id: 3,
  name: 'route-controls',
  statements: [
    `create table route_controls (
       route_id text primary key,
       paused boolean not null default false,
       stopped boolean not null default false,
       updated_at timestamptz not null
     )`,
  ],
};
