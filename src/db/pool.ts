import pg from 'pg';

/** Anything that runs a query: a Pool or a client inside a transaction. */
export type Queryable = Pick<pg.PoolClient, 'query'>;
export type Pool = pg.Pool;

export interface PoolOptions {
  connectionString: string;
  max?: number;
  /** How long a request waits for a connection before it fails with 503. */
  connectionTimeoutMillis?: number;
  /** Server-side limit per statement; 0 sends none (PgBouncer refuses it as a startup parameter). */
  statementTimeoutMillis?: number;
}

export function createPool({
  connectionString,
  max = 10,
  connectionTimeoutMillis = 5000,
  statementTimeoutMillis = 15_000,
}: PoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    connectionTimeoutMillis,
    idleTimeoutMillis: 30_000,
    // A query that runs away is cut off by the server, so a request never hangs on the database.
    statement_timeout: statementTimeoutMillis,
    application_name: 'inspection-report-intake',
  });
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on('error', () => undefined);
  return pool;
}

/** Runs fn in one transaction on one client: all of it is written, or none of it. */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A checked-out client whose connection drops (database restart) emits 'error' besides failing the
  // query in flight; unheard, that event would crash the process. The failed query carries the error.
  const ignore = () => undefined;
  client.on('error', ignore);
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(ignore);
    throw err;
  } finally {
    client.removeListener('error', ignore);
    client.release();
  }
}
