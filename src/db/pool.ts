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
  /**
   * false: every statement is sent unnamed, so none is kept on the server connection. For PgBouncer
   * before 1.21 in transaction mode, where consecutive transactions of one client run on different
   * server connections, and a statement prepared on one is unknown on the next.
   */
  preparedStatements?: boolean;
}

/**
 * A client that drops the `name` of every query config: the stores name their statements (prepared
 * once per connection), and this one switch turns all of them into unnamed ones, planned each time.
 */
class UnnamedStatementClient extends pg.Client {
  override query(...args: unknown[]): never {
    const config = args[0];
    if (typeof config === 'object' && config !== null && 'name' in config) args[0] = { ...config, name: undefined };
    return Reflect.apply(super.query, this, args) as never;
  }
}

export function createPool({
  connectionString,
  max = 10,
  connectionTimeoutMillis = 5000,
  statementTimeoutMillis = 15_000,
  preparedStatements = true,
}: PoolOptions): pg.Pool {
  const pool = new pg.Pool({
    ...(preparedStatements ? {} : { Client: UnnamedStatementClient }),
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
