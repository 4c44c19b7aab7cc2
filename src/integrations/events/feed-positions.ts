import { setTimeout as sleep } from 'node:timers/promises';
import { withTransaction, type Pool } from '../../db/pool.js';

/*
 * The feed's order (migration 26): an event gets its position after the transaction that recorded it has
 * committed, from one placer at a time in the whole database (an advisory lock), so a reader following
 * the positions never misses an event. Every serving process also places, once a poll, what a stopped
 * process left unplaced.
 */

/** The advisory lock key of the placer ('feed' in ASCII). */
const PLACER_LOCK = 0x66656564;
/** Events placed per transaction at most: each placement stays short. */
const BATCH = 1_000;

/** While another process's placer holds the lock (or a settle an event), this one looks again this often, holding no connection. */
const BUSY_RETRY_MS = 20;
/** Placements (and looks at a held lock) of one call at most: about five seconds of a busy lock. */
const MAX_ROUNDS = 250;

/**
 * One placement: the recorded events not yet in the feed, in the order they were recorded, at most BATCH
 * of them, those another transaction holds (an attempt settling) left for the next; `busy` when another
 * placer holds the lock, else whether any is left. An event whose publish is still sending its first
 * attempt waits until the publish records the outcome.
 */
function placeOnce(pool: Pool): Promise<'busy' | { left: boolean }> {
  return withTransaction(pool, async (db) => {
    const { rows } = await db.query<{ placer: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS placer', [
      PLACER_LOCK,
    ]);
    if (!rows[0]!.placer) return 'busy';
    await db.query(
      `WITH picked AS (
         SELECT ctid FROM webhook_events WHERE feed_position IS NULL AND status <> 'sending'
          ORDER BY feed_seq LIMIT $1 FOR UPDATE SKIP LOCKED
       ), placed AS (SELECT ctid, nextval('webhook_events_feed_position') AS position FROM picked)
       UPDATE webhook_events e SET feed_position = p.position FROM placed p WHERE e.ctid = p.ctid`,
      [BATCH],
    );
    const left = await db.query<{ left: boolean }>(
      `SELECT EXISTS (SELECT FROM webhook_events WHERE feed_position IS NULL AND status <> 'sending') AS left`,
    );
    return { left: left.rows[0]!.left };
  });
}

/**
 * Places every event waiting, looking again a moment later while another process's placer holds the lock
 * (it may have looked before our commit) or an event was held by its settling attempt.
 */
async function placeAll(pool: Pool): Promise<void> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const placed = await placeOnce(pool);
    if (placed !== 'busy' && !placed.left) return;
    await sleep(BUSY_RETRY_MS);
  }
}

/**
 * One process's placements: one at a time, and a call during one is served by the next, which every
 * call meanwhile shares; so a burst of publishes costs a few placements, not one transaction each.
 */
class Placer {
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  constructor(private readonly pool: Pool) {}

  place(): Promise<void> {
    if (!this.running) return this.start();
    return (this.queued ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.start();
      }));
  }

  private start(): Promise<void> {
    const run = placeAll(this.pool).finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    return run;
  }
}

const placers = new WeakMap<Pool, Placer>();

/** Places the events recorded before the call (by a placement begun after it): call it after the commit. */
export function placeEvents(pool: Pool): Promise<void> {
  let placer = placers.get(pool);
  if (!placer) placers.set(pool, (placer = new Placer(pool)));
  return placer.place();
}
