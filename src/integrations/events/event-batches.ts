import type { Queryable } from '../../db/pool.js';
import { REVOKED } from './event-life.js';

/**
 * Changes to many events at once (a recovery, a revocation, an address disabled, retention): each in
 * statements of a bounded number of rows, after the change that calls for it has committed, so that no
 * number of events makes a statement outlast the statement timeout or rolls that change back.
 */

/** Reads at most this many events per statement: each stays well inside the statement timeout. */
const BATCH = 500;
/** Batches of one change at most: half a million events (more are left to the worker, which settles each it takes). */
const MAX_BATCHES = 1_000;

/**
 * Sets `set` on the company's events for which `where` holds (`e` the event, `i` its integration; $3 on
 * are `values`), walking its events in primary-key order a batch at a time, so that each statement reads
 * a bounded number of rows however many the company has; returns how many it changed. The batch's rows
 * are updated by their key, not their ctid: a row another transaction changes meanwhile (an attempt
 * settling, the feed placing it) gets a new ctid, and an update by the old one would skip it unseen.
 */
async function inBatches(
  db: Queryable,
  companyId: string,
  change: { set: string; where: string; values: unknown[] },
): Promise<number> {
  let after = '';
  let total = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const { rows } = await db.query<{ last: string | null; seen: number; changed: number }>(
      `WITH batch AS (SELECT id FROM webhook_events WHERE company_id = $1 AND id > $2 ORDER BY id LIMIT ${BATCH}),
            changed AS (
              UPDATE webhook_events e SET ${change.set}
                FROM integrations i
               WHERE e.company_id = $1 AND e.id = ANY (ARRAY(SELECT id FROM batch))
                 AND i.company_id = e.company_id AND i.id = e.integration_id AND ${change.where}
              RETURNING 1)
       SELECT (SELECT max(id) FROM batch) AS last, (SELECT count(*)::int FROM batch) AS seen,
              (SELECT count(*)::int FROM changed) AS changed`,
      [companyId, after, ...change.values],
    );
    const { last, seen, changed } = rows[0]!;
    total += changed;
    if (seen < BATCH || last === null) break;
    after = last;
  }
  return total;
}

/**
 * Asks for one attempt now of every `failed` event of the company's active integration created at or
 * after `since` (a recovery), in batches; returns how many.
 */
export function recoverEvents(db: Queryable, companyId: string, since: Date): Promise<number> {
  return inBatches(db, companyId, {
    set: `status = 'pending', next_attempt_at = clock_timestamp(), redelivery = true`,
    where: `e.status = 'failed' AND e.created_at >= $3 AND i.revoked_at IS NULL`,
    values: [since],
  });
}

/**
 * Cancels every event of the company's revoked integrations still to be sent or sendable again (pending,
 * failed, none), in batches after the revocation has committed: nothing of a revoked integration is sent
 * again. An attempt in flight settles its own event. Events left by a process that stops midway are
 * cancelled by the worker as it takes them.
 */
export function cancelRevokedEvents(db: Queryable, companyId: string): Promise<number> {
  return inBatches(db, companyId, {
    set: `status = 'cancelled', next_attempt_at = NULL, redelivery = false, resume_at = NULL, last_error = $3`,
    where: `i.revoked_at IS NOT NULL AND e.status IN ('pending', 'failed', 'none')
            AND (e.status <> 'pending' OR e.leased_until IS NULL OR e.leased_until <= clock_timestamp())`,
    values: [REVOKED],
  });
}

/**
 * Fails every pending event of the company's disabled address, in batches after the attempt that disabled
 * it has settled; events in flight settle themselves, and those left over the worker fails as it takes them.
 */
export function failDisabledEvents(db: Queryable, companyId: string, reason: string): Promise<number> {
  return inBatches(db, companyId, {
    set: `status = 'failed', next_attempt_at = NULL, redelivery = false, resume_at = NULL,
          last_error = 'the webhook address is disabled: ' || $3`,
    where: `i.revoked_at IS NULL AND i.webhook_disabled_reason <> '' AND e.status = 'pending'
            AND (e.leased_until IS NULL OR e.leased_until <= clock_timestamp())`,
    values: [reason],
  });
}

/**
 * Forgets events older than `retentionMs`, a bounded number at a time, but never a `pending` one (still to
 * be attempted) nor a company's last event in the feed: it is the cursor a caught-up poller holds, however
 * long the company publishes nothing. A publish's first attempt whose outcome was never recorded (`sending`)
 * goes too. The delivery log's attempts as old go once their event has gone
 * (test deliveries have none). now(), not clock_timestamp(): the indexes on the times bound the scan.
 */
export async function sweepOldEvents(db: Queryable, retentionMs: number, limit = 10_000): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM webhook_events WHERE ctid IN (
       SELECT o.ctid FROM webhook_events o
        WHERE o.created_at < now() - $1 * interval '1 millisecond'
          AND o.status <> 'pending'
          AND (o.status = 'sending'
               OR EXISTS (SELECT FROM webhook_events n
                           WHERE n.company_id = o.company_id AND n.feed_position > o.feed_position))
        LIMIT $2)`,
    [retentionMs, limit],
  );
  await db.query(
    `DELETE FROM webhook_deliveries WHERE ctid IN (
       SELECT d.ctid FROM webhook_deliveries d
        WHERE d.attempted_at < now() - $1 * interval '1 millisecond'
          AND NOT EXISTS (SELECT FROM webhook_events e WHERE e.company_id = d.company_id AND e.id = d.webhook_id)
        LIMIT $2)`,
    [retentionMs, limit],
  );
  return rowCount ?? 0;
}
