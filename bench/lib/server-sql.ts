/**
 * One statement on a PostgreSQL server over a connection of its own, for what benches do
 * outside the service: create and drop their databases, count what a run left behind.
 */
import pg from 'pg';

export async function queryServer<Row extends pg.QueryResultRow = pg.QueryResultRow>(
  connectionString: string,
  statement: string,
): Promise<Row[]> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return (await client.query<Row>(statement)).rows;
  } finally {
    await client.end();
  }
}
