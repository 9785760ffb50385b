/**
 * Route control and route metrics (tables route_controls, lineage). Pausing or stopping a
 * route is a row here; every instance's orchestrator reads it on its next poll.
 */
import { type Kysely, sql } from 'kysely';
import type { DatabaseSchema } from './schema.js';

export interface RouteControl {
  route_id: string;
  paused: boolean;
  stopped: boolean;
}

export interface MessageCounts {
  messages_received: number;
  messages_completed: number;
  messages_failed: number;
  messages_in_flight: number;
}

export interface StageMetrics extends MessageCounts {
  stage: string;
  duration_ms_p50: number | null;
  duration_ms_p95: number | null;
}

export function createRoutesRepository(db: Kysely<DatabaseSchema>) {
  return {
    async controls(): Promise<RouteControl[]> {
      return db.selectFrom('route_controls').select(['route_id', 'paused', 'stopped']).execute();
    },

    async setControl(
      routeId: string,
      change: { paused?: boolean; stopped?: boolean },
      now: Date,
    ): Promise<RouteControl> {
      return db
        .insertInto('route_controls')
        .values({
          route_id: routeId,
          paused: change.paused ?? false,
          stopped: change.stopped ?? false,
          updated_at: now,
        })
        .onConflict((conflict) => conflict.column('route_id').doUpdateSet({ ...change, updated_at: now }))
        .returning(['route_id', 'paused', 'stopped'])
        .executeTakeFirstOrThrow();
    },

    /** Counts per stage of one route (or every route) across running executions. */
    async stageMetrics(routeId: string | undefined): Promise<Array<StageMetrics & { route_id: string }>> {
      const result = await sql<StageMetrics & { route_id: string }>`
        select l.route_id, l.stage,
               count(*)::int as messages_received,
               (count(*) filter (where l.status in ('completed', 'skipped')))::int as messages_completed,
               (count(*) filter (where l.status = 'failed'))::int as messages_failed,
               (count(*) filter (where l.status = 'queued'))::int as messages_in_flight,
               percentile_cont(0.5) within group (order by l.duration_ms) as duration_ms_p50,
               percentile_cont(0.95) within group (order by l.duration_ms) as duration_ms_p95
        from lineage l join executions e on e.id = l.execution_id
        where e.status = 'running' ${routeId === undefined ? sql`` : sql`and l.route_id = ${routeId}`}
        group by l.route_id, l.stage
        order by l.route_id, l.stage`.execute(db);
      return result.rows;
    },

    /**
     * Messages of a route finished in the last `seconds` (for a throughput figure), counted over
     * the same rows as stageMetrics (running executions): an execution that just ended must not
     * give a rate beside zero counts.
     */
    async recentlyFinished(routeId: string, seconds: number, now: Date): Promise<number> {
      const since = new Date(now.getTime() - seconds * 1000).toISOString();
      const result = await sql<{ count: number }>`
        select count(*)::int as count
        from lineage l join executions e on e.id = l.execution_id
        where e.status = 'running' and l.route_id = ${routeId} and l.finished_at > ${since}::timestamptz`.execute(
        db,
      );
      return result.rows[0]?.count ?? 0;
    },
  };
}

export type RoutesRepository = ReturnType<typeof createRoutesRepository>;
