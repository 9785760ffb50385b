/**
 * The read side of executions and lineage: one execution, lists, per-stage counts, statistics
 * and the lineage walk. Nothing here changes a row; the writes, with their pending-counter and
 * completion rules, are composed in executions-repository.ts.
 */
import { type Kysely, sql } from 'kysely';
import type { Outcome } from './execution-outcome.js';
import type { ExecutionRow, ExecutionStatistics, LineageRow, StageCounts } from './execution-types.js';
import type { DatabaseSchema, ExecutionStatus, LineageStatus } from './schema.js';

/** Where a page of the outbox ends: the next page starts after this message. */
export type QueuedCursor = Pick<LineageRow, 'queued_at' | 'message_id'>;

/** Failed messages listed in an execution's statistics. */
export const FIRST_ERRORS = 5;

/**
 * The read side of lineage: message states, per-stage counts, statistics, the lineage page and
 * the upstream walk.
 */
function createLineageQueries(db: Kysely<DatabaseSchema>) {
  return {
    /** The ids among `messageIds` that are already finished (one query for many lookups). */
    async finishedAmong(messageIds: readonly string[]): Promise<Set<string>> {
      if (messageIds.length === 0) return new Set();
      const rows = await db
        .selectFrom('lineage')
        .select('message_id')
        .where('message_id', 'in', [...messageIds])
        .where('status', '<>', 'queued')
        .execute();
      return new Set(rows.map((row) => row.message_id));
    },

    /**
     * Queued messages of an execution with their envelopes (the outbox), oldest first, at most
     * `limit` of them after the `after` cursor: a resumed execution may hold a great many, and
     * their envelopes are read a page at a time rather than all into memory at once.
     */
    async queuedMessages(
      executionId: string,
      page: { limit?: number; after?: QueuedCursor } = {},
    ): Promise<Array<Pick<LineageRow, 'message_id' | 'route_id' | 'stage' | 'envelope' | 'queued_at'>>> {
      let query = db
        .selectFrom('lineage')
        .select(['message_id', 'route_id', 'stage', 'envelope', 'queued_at'])
        .where('execution_id', '=', executionId)
        .where('status', '=', 'queued');
      const after = page.after;
      if (after)
        query = query.where(
          sql<boolean>`(queued_at, message_id) > (${after.queued_at}, ${after.message_id}::uuid)`,
        );
      return query
        .orderBy('queued_at')
        .orderBy('message_id')
        .limit(page.limit ?? 1000)
        .execute();
    },

    /** Messages per stage and status, stages in the order their first message was queued. */
    async stageCounts(executionId: string): Promise<StageCounts[]> {
      const result = await sql<StageCounts>`
        select route_id, stage,
          (count(*) filter (where status = 'queued'))::int as queued,
          (count(*) filter (where status = 'completed'))::int as completed,
          (count(*) filter (where status = 'failed'))::int as failed,
          (count(*) filter (where status = 'skipped'))::int as skipped
        from lineage where execution_id = ${executionId}::uuid
        group by route_id, stage
        order by min(queued_at), route_id, stage`.execute(db);
      return result.rows;
    },

    async statistics(executionId: string): Promise<ExecutionStatistics> {
      const row = await db
        .selectFrom('lineage')
        .select([
          sql<number>`count(*)::int`.as('total'),
          sql<number>`(count(*) filter (where status = 'completed'))::int`.as('completed'),
          sql<number>`(count(*) filter (where status = 'failed'))::int`.as('failed'),
          sql<number>`(count(*) filter (where status = 'skipped'))::int`.as('skipped'),
          sql<number>`(count(*) filter (where status = 'queued'))::int`.as('queued'),
        ])
        .where('execution_id', '=', executionId)
        .executeTakeFirstOrThrow();
      const firstErrors =
        row.failed === 0
          ? []
          : await db
              .selectFrom('lineage')
              .select(['message_id', 'route_id', 'stage', 'error'])
              .where('execution_id', '=', executionId)
              .where('status', '=', 'failed')
              .orderBy('queued_at')
              .orderBy('message_id')
              .limit(FIRST_ERRORS)
              .execute();
      const finished = row.completed + row.failed + row.skipped;
      return {
        execution_id: executionId,
        total_messages: row.total,
        completed_messages: row.completed,
        failed_messages: row.failed,
        skipped_messages: row.skipped,
        processing_messages: row.queued,
        success_rate: finished === 0 ? 0 : (row.completed + row.skipped) / finished,
        first_errors: firstErrors,
      };
    },

    async lineage(filter: {
      execution_id: string;
      status?: LineageStatus | undefined;
      route_id?: string | undefined;
      stage?: string | undefined;
      limit: number;
      offset: number;
    }): Promise<{ messages: Omit<LineageRow, 'envelope'>[]; total: number }> {
      let query = db.selectFrom('lineage').where('execution_id', '=', filter.execution_id);
      if (filter.status) query = query.where('status', '=', filter.status);
      if (filter.route_id) query = query.where('route_id', '=', filter.route_id);
      if (filter.stage) query = query.where('stage', '=', filter.stage);
      const [messages, count] = await Promise.all([
        query
          .select([
            'message_id',
            'correlation_id',
            'execution_id',
            'route_id',
            'stage',
            'emitted_by',
            'status',
            'attempts',
            'error',
            'queued_at',
            'started_at',
            'finished_at',
            'duration_ms',
          ])
          .orderBy('queued_at')
          .orderBy('message_id')
          .limit(filter.limit)
          .offset(filter.offset)
          .execute(),
        query.select((expression) => expression.fn.countAll<string>().as('total')).executeTakeFirstOrThrow(),
      ]);
      return { messages, total: Number(count.total) };
    },

    /** The message and every ancestor, walking correlation_id upstream; nearest first. */
    async upstream(messageId: string): Promise<Omit<LineageRow, 'envelope'>[]> {
      const result = await sql<Omit<LineageRow, 'envelope'>>`
        with recursive chain as (
          select l.*, 0 as depth from lineage l where l.message_id = ${messageId}
          union all
          select parent.*, chain.depth + 1 from lineage parent
          join chain on parent.message_id = chain.correlation_id
          where chain.depth < 1000
        )
        select message_id, correlation_id, execution_id, route_id, stage, emitted_by, status, attempts, error,
               queued_at, started_at, finished_at, duration_ms
        from chain order by depth`.execute(db);
      return result.rows;
    },
  };
}

export function createExecutionQueries(db: Kysely<DatabaseSchema>) {
  return {
    async findExecution(id: string): Promise<ExecutionRow | undefined> {
      return db.selectFrom('executions').selectAll().where('id', '=', id).executeTakeFirst();
    },

    async listExecutions(filter: {
      status?: ExecutionStatus | undefined;
      config_id?: string | undefined;
      tag?: string | undefined;
      /** Any of these outcomes (`failed, partial, empty`: the runs that need attention). */
      outcomes?: readonly Outcome[] | undefined;
      limit: number;
      offset: number;
    }): Promise<{ executions: ExecutionRow[]; total: number }> {
      let query = db.selectFrom('executions');
      if (filter.outcomes && filter.outcomes.length > 0)
        query = query.where('outcome', 'in', [...filter.outcomes]);
      if (filter.status) query = query.where('status', '=', filter.status);
      if (filter.config_id) query = query.where('config_id', '=', filter.config_id);
      if (filter.tag) query = query.where('tag', '=', filter.tag);
      const [executions, count] = await Promise.all([
        query
          .selectAll()
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(filter.limit)
          .offset(filter.offset)
          .execute(),
        query.select((expression) => expression.fn.countAll<string>().as('total')).executeTakeFirstOrThrow(),
      ]);
      return { executions, total: Number(count.total) };
    },

    async runningExecutions(): Promise<ExecutionRow[]> {
      return db
        .selectFrom('executions')
        .selectAll()
        .where('status', '=', 'running')
        .orderBy('created_at')
        .execute();
    },

    ...createLineageQueries(db),
  };
}
