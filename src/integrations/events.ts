import type { Event, Report } from '../api-types.js';
import { isoTimestamp } from '../db/iso-timestamp.js';
import type { Queryable } from '../db/pool.js';

/**
 * Events (migration 18): each webhook that was due, kept with where its delivery stands. An event is
 * recorded in the commit that publishes its report; the feed shows events in the order of the
 * transactions that recorded them, and only those of transactions older than every transaction still
 * running (`pg_snapshot_xmin`): a transaction still running, or one to come, can only add events after
 * every event shown, so a reader following the feed never misses one, whatever commits at once.
 */

export type DeliveryStatus = Event['delivery']['status'];

/** Where each company's feed may be shown up to: the events of transactions that can no longer add one before them. */
const SETTLED = 'e.feed_xid < pg_snapshot_xmin(pg_current_snapshot())';

const EVENT_COLUMNS = `e.id, ${isoTimestamp('e.created_at')} AS "createdAt", e.payload, e.status,
  e.attempts, ${isoTimestamp('e.last_attempt_at')} AS "lastAttemptAt",
  ${isoTimestamp('e.next_attempt_at')} AS "nextAttemptAt", e.last_error AS "lastError"`;

interface EventRow {
  id: string;
  createdAt: string;
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  lastError: string;
}

const toEvent = (row: EventRow): Event => ({
  id: row.id,
  type: 'report.published',
  createdAt: row.createdAt,
  report: JSON.parse(row.payload) as Report,
  delivery: {
    status: row.status,
    attempts: row.attempts,
    lastAttemptAt: row.lastAttemptAt,
    nextAttemptAt: row.nextAttemptAt,
    lastError: row.lastError,
  },
});

/** A new event: its id is the webhook-id of every attempt; `pending` ones are due at once until an attempt settles them. */
export interface NewEvent {
  id: string;
  reportId: string;
  /** The report as published, as the webhook sends it. */
  payload: string;
  status: 'pending' | 'none' | 'failed';
  lastError?: string;
}

/** Records an event, in the caller's transaction (the publish's); answers when it is due (pending only). */
export async function recordEvent(db: Queryable, companyId: string, event: NewEvent): Promise<string | null> {
  const { rows } = await db.query<{ due: string | null }>(
    `INSERT INTO webhook_events (company_id, id, report_id, payload, status, next_attempt_at, last_error)
     VALUES ($1, $2, $3, $4, $5, CASE WHEN $5 = 'pending' THEN clock_timestamp() END, $6)
     RETURNING ${isoTimestamp('next_attempt_at')} AS due`,
    [companyId, event.id, event.reportId, event.payload, event.status, event.lastError ?? ''],
  );
  return rows[0]!.due;
}

/** One event of the company, or undefined. */
export async function findEvent(db: Queryable, companyId: string, id: string): Promise<Event | undefined> {
  const { rows } = await db.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM webhook_events e WHERE e.company_id = $1 AND e.id = $2`,
    [companyId, id],
  );
  return rows[0] && toEvent(rows[0]);
}

/** A page of the company's feed, oldest first, after the event `after` (undefined: from the start). */
export interface EventPage {
  events: Event[];
  /** More settled events follow the page. */
  more: boolean;
}

/** The page after event `after`, or undefined when `after` is not an event of the company. */
export async function listEvents(
  db: Queryable,
  companyId: string,
  { after, limit }: { after?: string; limit: number },
): Promise<EventPage | undefined> {
  const { rows } = await db.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM webhook_events e
      WHERE e.company_id = $1 AND ${SETTLED}
        AND ($2::text IS NULL OR (e.feed_xid, e.feed_seq) >
             (SELECT a.feed_xid, a.feed_seq FROM webhook_events a WHERE a.company_id = $1 AND a.id = $2))
      ORDER BY e.feed_xid, e.feed_seq
      LIMIT $3`,
    [companyId, after ?? null, limit + 1],
  );
  if (after !== undefined && rows.length === 0 && !(await eventExists(db, companyId, after))) return undefined;
  return { events: rows.slice(0, limit).map(toEvent), more: rows.length > limit };
}

async function eventExists(db: Queryable, companyId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT FROM webhook_events WHERE company_id = $1 AND id = $2', [companyId, id]);
  return rowCount === 1;
}

/**
 * Asks for one attempt of the event now (a redelivery): it becomes `pending`, due at once, and its
 * outcome settles it without a schedule. Undefined when the company has no such event.
 */
export async function redeliverEvent(db: Queryable, companyId: string, id: string): Promise<Event | undefined> {
  const { rows } = await db.query<EventRow>(
    `UPDATE webhook_events e
        SET status = 'pending', next_attempt_at = clock_timestamp(), redelivery = true
      WHERE e.company_id = $1 AND e.id = $2
      RETURNING ${EVENT_COLUMNS}`,
    [companyId, id],
  );
  return rows[0] && toEvent(rows[0]);
}

/** Asks for one attempt now of every `failed` event of the company created at or after `since` (a recovery). */
export async function recoverEvents(db: Queryable, companyId: string, since: Date): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE webhook_events SET status = 'pending', next_attempt_at = clock_timestamp(), redelivery = true
      WHERE company_id = $1 AND status = 'failed' AND created_at >= $2`,
    [companyId, since],
  );
  return rowCount ?? 0;
}

/** Fails a pending event without an attempt (its address is gone or disabled), saying why. */
export async function failEvent(db: Queryable, companyId: string, id: string, error: string): Promise<void> {
  await db.query(
    `UPDATE webhook_events
        SET status = 'failed', next_attempt_at = NULL, leased_until = NULL, redelivery = false, last_error = $3
      WHERE company_id = $1 AND id = $2 AND status = 'pending'`,
    [companyId, id, error],
  );
}

/** Cancels every pending event of the company: its integration is revoked, nothing of it is sent again. */
export async function cancelPendingEvents(db: Queryable, companyId: string): Promise<void> {
  await db.query(
    `UPDATE webhook_events
        SET status = 'cancelled', next_attempt_at = NULL, leased_until = NULL, redelivery = false,
            last_error = 'the REST API integration was revoked'
      WHERE company_id = $1 AND status = 'pending'`,
    [companyId],
  );
}

/**
 * Forgets events older than `retentionMs`, a bounded number at a time, but never a `pending` one (still to
 * be attempted) nor a company's last event in the feed: it is the cursor a caught-up poller holds, however
 * long the company publishes nothing.
 */
export async function sweepOldEvents(db: Queryable, retentionMs: number, limit = 10_000): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM webhook_events WHERE ctid IN (
       SELECT o.ctid FROM webhook_events o
        WHERE o.created_at < clock_timestamp() - $1 * interval '1 millisecond'
          AND o.status <> 'pending'
          AND EXISTS (SELECT FROM webhook_events n
                       WHERE n.company_id = o.company_id AND (n.feed_xid, n.feed_seq) > (o.feed_xid, o.feed_seq))
        LIMIT $2)`,
    [retentionMs, limit],
  );
  return rowCount ?? 0;
}
