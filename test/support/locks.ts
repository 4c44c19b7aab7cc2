import { setTimeout as sleep } from 'node:timers/promises';
import type { PoolClient } from 'pg';
import type { Pool, Queryable } from '../../src/db/pool.js';

/**
 * Waits until some statement is blocked by a lock that `locker` holds (a test holds a lock to make a
 * request slow), asking through `watcher`. Bounded: false when nothing is blocked within about 15
 * seconds, or once `gaveUp()` says the request already ended.
 */
export async function waitUntilBlocked(
  watcher: Queryable,
  locker: Queryable,
  gaveUp: () => boolean = () => false,
): Promise<boolean> {
  const {
    rows: [own],
  } = await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  for (let i = 0; i < 300 && !gaveUp(); i++) {
    const { rows } = await watcher.query('SELECT 1 FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))', [
      own!.pid,
    ]);
    if (rows.length > 0) return true;
    await sleep(50);
  }
  return false;
}

/**
 * Locks a report's row (by restId) in a transaction on a client of its own, so that a request
 * updating that report waits in the database: a slow request on demand. COMMIT and release it.
 */
export async function holdReportRow(db: Pool, companyId: string, restId: string): Promise<PoolClient> {
  const locker = await db.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM reports WHERE company_id = $1 AND rest_id = $2 FOR UPDATE', [companyId, restId]);
    return locker;
  } catch (err) {
    locker.release();
    throw err;
  }
}
