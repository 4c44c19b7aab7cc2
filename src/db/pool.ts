import pg from 'pg';

/** Anything that runs a query: a Pool or a client inside a transaction. */
export type Queryable = Pick<pg.PoolClient, 'query'>;
export type Pool = pg.Pool;

/** The message of pg's client-side query timeout (`query_timeout`). */
const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

/** Whether err is pg's query_timeout: the client stopped waiting, the connection's state is unknown. */
export function isQueryTimeout(err: unknown): boolean {
  return err instanceof Error && err.message === QUERY_TIMEOUT_MESSAGE;
}

/**
 * The server-side statement timeout that goes with a wait limit: below it, so that PostgreSQL cancels
 * a slow statement itself (nothing written, the connection stays usable) before the client stops
 * waiting for the result (after which the statement may still run, and even commit).
 */
export const statementTimeoutFor = (waitMillis: number) => Math.floor(waitMillis * 0.8);

/**
 * Options of every connection the service opens (the pool's, and the change feed's LISTEN connection):
 * none of them waits on PostgreSQL longer than waitMillis, whatever it does. A refused connection fails
 * at once; one that is accepted but never completed (a frozen server) is cut at waitMillis
 * (connectionTimeoutMillis); a query whose result does not come is failed at waitMillis by pg's own
 * query_timeout. TCP keepalive finds a peer that vanished (host down, connection dropped by the
 * network) on connections that sit idle, the LISTEN connection above all.
 */
export function connectionOptions(waitMillis: number) {
  return {
    connectionTimeoutMillis: waitMillis,
    query_timeout: waitMillis,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}

export interface PoolOptions {
  connectionString: string;
  max?: number;
  /** How long a request waits on the database, for a connection and for each query's result, before it fails with 503. */
  connectionTimeoutMillis?: number;
  /** Server-side limit per statement (default: statementTimeoutFor the wait); 0 sends none (PgBouncer refuses it as a startup parameter). */
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
  statementTimeoutMillis = statementTimeoutFor(connectionTimeoutMillis),
  preparedStatements = true,
}: PoolOptions): pg.Pool {
  const pool = new pg.Pool({
    ...(preparedStatements ? {} : { Client: UnnamedStatementClient }),
    connectionString,
    max,
    ...connectionOptions(connectionTimeoutMillis),
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
  // Set when the connection can no longer be trusted: the pool then closes it instead of reusing it.
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    // After a query timeout the query without a result still occupies the connection: a ROLLBACK would
    // queue behind it for another full wait. Closing the connection rolls the transaction back.
    if (isQueryTimeout(err)) broken = err as Error;
    else
      await client.query('ROLLBACK').catch((rollbackErr: unknown) => {
        broken = rollbackErr instanceof Error ? rollbackErr : new Error('ROLLBACK failed');
      });
    throw err;
  } finally {
    client.removeListener('error', ignore);
    client.release(broken);
  }
}
