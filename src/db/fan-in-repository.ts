/**
 * Fan-in for one execution (migration 0015), group-committed: the arrivals that come in while
 * one batch is being written go together in the next (runtime/batcher.ts), as one statement.
 * That statement inserts the batch's arrivals (nothing for an item that already arrived), bumps
 * each group's counter once by the number it inserted, and, when that brings the count to the
 * total, names one of the batch's new arrivals as the group's completer — all in one
 * autocommitted statement, so a crash leaves either all of it or none. The counter row's lock
 * orders concurrent batches (on any instance), so exactly one of them sees the count reach the
 * total. Each caller resolves only once that statement has returned, that is once its arrival
 * is committed: the message is acknowledged after that, never before.
 *
 * Why batch: arrivals of one group all update its counter row, so on a PostgreSQL server they
 * queue on that row's lock for one commit each (about 530 a second measured with
 * bench:conversations, issue 36). One update per batch lifts that bound.
 */
import { type Kysely, sql } from 'kysely';
import type { ExecutionFanIn } from '../ports/execution-state.js';
import { createBatcher } from '../runtime/batcher.js';
import { int4Array, textArray, uuidArray } from './array-parameter.js';
import type { DatabaseSchema } from './schema.js';

type Arrivals = Array<{ item: string; value: Record<string, unknown> }>;

export interface FanInArrival {
  executionId: string;
  group: string;
  item: string;
  value: Record<string, unknown>;
  total: number;
}

/** Batches of at most this many arrivals; calls beyond it wait for the next statement. */
const MAX_BATCH = 500;

export function createExecutionFanIn(db: Kysely<DatabaseSchema>) {
  const arrive = createBatcher((arrivals: FanInArrival[]) => recordArrivals(db, arrivals), MAX_BATCH);
  return {
    forExecution(executionId: string): ExecutionFanIn {
      return {
        arrive: (group, item, value, total) => arrive({ executionId, group, item, value, total }),
      };
    },
  };
}

/**
 * Records `arrivals` in one statement; for each, every arrival of its group (sorted by item)
 * when it is the group's completer (the one that completed it, again if it arrives again),
 * else undefined.
 */
export async function recordArrivals(
  db: Kysely<DatabaseSchema>,
  arrivals: readonly FanInArrival[],
): Promise<Array<Arrivals | undefined>> {
  const completers = await sql<{ execution_id: string; group_key: string; item_key: string }>`
    with input as (
      select distinct on (execution_id, group_key, item_key) *
      from unnest(
        ${uuidArray(arrivals.map((arrival) => arrival.executionId))}::uuid[],
        ${textArray(arrivals.map((arrival) => arrival.group))}::text[],
        ${textArray(arrivals.map((arrival) => arrival.item))}::text[],
        ${textArray(arrivals.map((arrival) => JSON.stringify(arrival.value)))}::text[],
        ${int4Array(arrivals.map((arrival) => arrival.total))}::int4[]
      ) as v(execution_id, group_key, item_key, value, total)
      order by execution_id, group_key, item_key
    ),
    -- Inserted, and counter rows locked, in key order: two instances' batches that share
    -- groups wait for each other, never deadlock.
    inserted as (
      insert into execution_fan_in_arrivals (execution_id, group_key, item_key, value)
      select execution_id, group_key, item_key, value::jsonb from input
      order by execution_id, group_key, item_key
      on conflict do nothing
      returning execution_id, group_key, item_key
    ),
    batch as (
      select i.execution_id, i.group_key, count(*)::int as arrived, max(i.item_key) as candidate,
             (select max(v.total) from input v
              where v.execution_id = i.execution_id and v.group_key = i.group_key) as total
      from inserted i
      group by i.execution_id, i.group_key
    ),
    counted as (
      insert into execution_fan_in_groups as g (execution_id, group_key, arrived, completed_by)
      select execution_id, group_key, arrived, case when arrived >= total then candidate end
      from batch
      order by execution_id, group_key
      on conflict (execution_id, group_key) do update
        set arrived = g.arrived + excluded.arrived,
            completed_by = coalesce(g.completed_by, (
              select b.candidate from batch b
              where b.execution_id = excluded.execution_id and b.group_key = excluded.group_key
                and g.arrived + excluded.arrived >= b.total))
      returning g.execution_id, g.group_key, g.completed_by
    )
    -- A group this statement did not count (only redeliveries in it) is read as it was when
    -- the statement began: its completer, if any, was committed before.
    select v.execution_id, v.group_key, v.item_key
    from input v
    left join counted c on c.execution_id = v.execution_id and c.group_key = v.group_key
    left join execution_fan_in_groups g on g.execution_id = v.execution_id and g.group_key = v.group_key
    where coalesce(c.completed_by, g.completed_by) = v.item_key`.execute(db);

  // Read after the statement committed, so the group's every arrival is visible: the counter
  // reached the total only once all of them were committed.
  const whole = new Map<string, Arrivals>();
  for (const completer of completers.rows) {
    const rows = await db
      .selectFrom('execution_fan_in_arrivals')
      .select(['item_key', 'value'])
      .where('execution_id', '=', completer.execution_id)
      .where('group_key', '=', completer.group_key)
      .orderBy('item_key')
      .execute();
    whole.set(
      key(completer.execution_id, completer.group_key, completer.item_key),
      rows.map((row) => ({ item: row.item_key, value: row.value })),
    );
  }
  return arrivals.map((arrival) => whole.get(key(arrival.executionId, arrival.group, arrival.item)));
}

function key(executionId: string, group: string, item: string): string {
  // The database gives a uuid back in lower case, whatever case it was given in.
  return JSON.stringify([executionId.toLowerCase(), group, item]);
}
