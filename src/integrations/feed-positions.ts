import { withTransaction, type Pool } from '../db/pool.js';

/**
 * The feed's order (migration 26). An event gets its position only after the transaction that recorded it
 * has committed, from one placer at a time in the whole database (a transaction-scoped advisory lock, which
 * PgBouncer's transaction mode keeps): positions are handed out in the order of the placers' commits, so
 * once a reader has seen a position, every event placed later has a greater one, and a reader following
 * the positions never misses an event. A transaction left open elsewhere holds back only its own events.
 * Every transaction that records events places them once it has committed; every serving process also
 * places what is left (an event recorded by a process that stopped before placing it) once a poll.
 */

/** The advisory lock key of the placer ('feed' in ASCII). */
const PLACER_LOCK = 0x66656564;
/** Events placed per transaction at most: each placement stays short. */
const BATCH = 1_000;

/**
 * Places the recorded events not yet in the feed, in the order they were recorded; answers how many. It waits
 * its turn (a placer at work may have looked before the caller's commit), each placement being short. An
 * event whose publish is still sending its first attempt waits until the publish records the outcome.
 */
export function placeEvents(pool: Pool): Promise<number> {
  return withTransaction(pool, async (db) => {
    await db.query('SELECT pg_advisory_xact_lock($1)', [PLACER_LOCK]);
    const { rowCount } = await db.query(
      `WITH picked AS (
         SELECT ctid FROM webhook_events WHERE feed_position IS NULL AND status <> 'sending'
          ORDER BY feed_seq LIMIT $1 FOR UPDATE SKIP LOCKED
       ), placed AS (SELECT ctid, nextval('webhook_events_feed_position') AS position FROM picked)
       UPDATE webhook_events e SET feed_position = p.position FROM placed p WHERE e.ctid = p.ctid`,
      [BATCH],
    );
    return rowCount ?? 0;
  });
}
