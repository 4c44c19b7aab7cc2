import { setTimeout as sleep } from 'node:timers/promises';
import type { Queryable } from '../../src/db/pool.js';

/**
 * Waits until a statement starting with `sqlPrefix` is blocked on a lock in the database (a test holds
 * the lock to make a request slow). Bounded: false when none is seen within about 15 seconds, or
 * once `gaveUp()` says the request already ended.
 */
export async function waitUntilBlocked(db: Queryable, sqlPrefix: string, gaveUp: () => boolean = () => false): Promise<boolean> {
  for (let i = 0; i < 300 && !gaveUp(); i++) {
    const { rows } = await db.query(
      `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND starts_with(query, $1) AND pid <> pg_backend_pid()`,
      [sqlPrefix]);
    if (rows.length > 0) return true;
    await sleep(50);
  }
  return false;
}
