import { setTimeout as sleep } from 'node:timers/promises';
import type { Queryable } from '../../src/db/pool.js';

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
