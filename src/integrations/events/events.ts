import type { Event, EventType, Report } from '../../api-types.js';
import { quoted } from '../../core/quoted.js';
import { isoTimestamp } from '../../db/iso-timestamp.js';
import type { Queryable } from '../../db/pool.js';

/**
 * Events (migration 18): each webhook that was due, kept with where its delivery stands. An event is
 * recorded in the commit of what it tells of (a publish, a start: event-types.ts; a publish's own attempt
 * records it as it is sent, `sending`, and the outcome in the commit that publishes); the feed shows events
 * in the order of their positions (feed-positions.ts).
 */

export type DeliveryStatus = Event['delivery']['status'];

const EVENT_COLUMNS = `e.id, e.type, ${isoTimestamp('e.created_at')} AS "createdAt", e.payload, e.status,
  e.attempts, ${isoTimestamp('e.last_attempt_at')} AS "lastAttemptAt",
  ${isoTimestamp('e.next_attempt_at')} AS "nextAttemptAt", e.last_error AS "lastError"`;

interface EventRow {
  id: string;
  type: EventType;
  createdAt: string;
  payload: string;
  /** `sending`: a publish's own attempt is in flight; the API shows it as pending, no next attempt due. */
  status: DeliveryStatus | 'sending';
  attempts: number;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  lastError: string;
}

const toEvent = (row: EventRow): Event => ({
  id: row.id,
  type: row.type,
  createdAt: row.createdAt,
  report: JSON.parse(row.payload) as Report,
  delivery: {
    status: row.status === 'sending' ? 'pending' : row.status,
    attempts: row.attempts,
    lastAttemptAt: row.lastAttemptAt,
    nextAttemptAt: row.nextAttemptAt,
    lastError: row.lastError,
  },
});

/** A new event: its id is the webhook-id of every attempt; `pending` ones are due at once until an attempt settles them. */
export interface NewEvent {
  id: string;
  type: EventType;
  reportId: string;
  /** The integration it is for: it is never sent once that integration is revoked. */
  integrationId: string;
  /** The report as the event's webhook carries it (JSON): each attempt's body is made from it by the type. */
  payload: string;
  status: 'pending' | 'none' | 'failed';
  lastError?: string;
  /** The publish's own attempt holds the event from the start: its settle carries this lease. */
  lease?: string;
}

/** Records an event, in the caller's transaction (the publish's, the start's); returns when it is due (pending only). */
export async function recordEvent(db: Queryable, companyId: string, event: NewEvent): Promise<string | null> {
  const { rows } = await db.query<{ due: string | null }>(
    `INSERT INTO webhook_events (company_id, id, report_id, integration_id, payload, status, next_attempt_at,
                                 last_error, lease, type)
     VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $6 = 'pending' THEN clock_timestamp() END, $7, $8, $9)
     RETURNING ${isoTimestamp('next_attempt_at')} AS due`,
    [
      companyId,
      event.id,
      event.reportId,
      event.integrationId,
      event.payload,
      event.status,
      event.lastError ?? '',
      event.lease ?? null,
      event.type,
    ],
  );
  return rows[0]!.due;
}

/**
 * Records the event of a publish's own attempt as it is sent (`sending`, held by `lease`), in the publish's
 * first transaction: readable by its webhook-id while the receiver responds, placed in the feed only once
 * the publish records the outcome. A publish tried again (the outcome never recorded) takes it over.
 */
export async function recordSendingEvent(
  db: Queryable,
  companyId: string,
  event: Required<Pick<NewEvent, 'id' | 'type' | 'reportId' | 'integrationId' | 'payload' | 'lease'>>,
): Promise<void> {
  await db.query(
    `INSERT INTO webhook_events (company_id, id, type, report_id, integration_id, payload, status, lease)
     VALUES ($1, $2, $3, $4, $5, $6, 'sending', $7)
     ON CONFLICT (company_id, id) DO UPDATE
       SET report_id = EXCLUDED.report_id, integration_id = EXCLUDED.integration_id, payload = EXCLUDED.payload,
           lease = EXCLUDED.lease, created_at = clock_timestamp()
       WHERE webhook_events.status = 'sending'`,
    [companyId, event.id, event.type, event.reportId, event.integrationId, event.payload, event.lease],
  );
}

/** The publish's attempt failed and nothing is published ("fail"): its event goes; a retry records it again. */
export async function forgetSendingEvent(db: Queryable, companyId: string, id: string, lease: string): Promise<void> {
  await db.query(`DELETE FROM webhook_events WHERE company_id = $1 AND id = $2 AND status = 'sending' AND lease = $3`, [
    companyId,
    id,
    lease,
  ]);
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

/** Where `after` stands: in the feed at a position, not yet in it, or not an event of the company. */
type Cursor = { position: string } | 'not_placed' | 'unknown';

async function cursorOf(db: Queryable, companyId: string, after: string | undefined): Promise<Cursor> {
  if (after === undefined) return { position: '0' };
  const { rows } = await db.query<{ position: string | null }>(
    'SELECT feed_position AS position FROM webhook_events WHERE company_id = $1 AND id = $2',
    [companyId, after],
  );
  if (!rows[0]) return 'unknown';
  return rows[0].position === null ? 'not_placed' : { position: rows[0].position };
}

/**
 * The page after event `after` (undefined: from the start); `unknown` when `after` is not an event of the
 * company, `not_placed` when it is not in the feed yet (the events before it may not be either).
 */
export async function listEvents(
  db: Queryable,
  companyId: string,
  { after, limit }: { after?: string; limit: number },
): Promise<EventPage | Exclude<Cursor, { position: string }>> {
  const cursor = await cursorOf(db, companyId, after);
  if (typeof cursor === 'string') return cursor;
  const { rows } = await db.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM webhook_events e
      WHERE e.company_id = $1 AND e.feed_position > $2
      ORDER BY e.feed_position
      LIMIT $3`,
    [companyId, cursor.position, limit + 1],
  );
  return { events: rows.slice(0, limit).map(toEvent), more: rows.length > limit };
}

/** Why an event cannot be redelivered, when it cannot. */
export async function whyNotRedeliverable(db: Queryable, companyId: string, id: string): Promise<string | undefined> {
  const { rows } = await db.query<{ status: DeliveryStatus; revoked: boolean }>(
    `SELECT e.status, i.revoked_at IS NOT NULL AS revoked
       FROM webhook_events e JOIN integrations i ON i.company_id = e.company_id AND i.id = e.integration_id
      WHERE e.company_id = $1 AND e.id = $2`,
    [companyId, id],
  );
  const event = rows[0];
  if (event?.revoked || event?.status === 'cancelled')
    return `event ${quoted(id)} belongs to a REST API integration that was revoked: it is never sent again`;
  return undefined;
}

/**
 * Asks for one attempt of the event now (a redelivery), after the attempt in flight if there is one (a
 * publish's own included).
 * A pending event keeps its schedule, resumed should the redelivery fail (resume_at). Undefined when the
 * company has no such event.
 */
export async function redeliverEvent(db: Queryable, companyId: string, id: string): Promise<Event | undefined> {
  const { rows } = await db.query<EventRow>(
    `UPDATE webhook_events e
        SET redelivery = true,
            resume_at = CASE WHEN e.status NOT IN ('pending', 'sending') THEN NULL
                             WHEN e.status = 'sending' OR e.leased_until > clock_timestamp() THEN e.resume_at
                             ELSE coalesce(e.resume_at, e.next_attempt_at) END,
            next_attempt_at = CASE WHEN e.status = 'sending' THEN NULL
                                   WHEN e.status = 'pending' AND e.leased_until > clock_timestamp()
                                   THEN e.next_attempt_at ELSE clock_timestamp() END,
            status = CASE WHEN e.status = 'sending' THEN 'sending' ELSE 'pending' END
      WHERE e.company_id = $1 AND e.id = $2
      RETURNING ${EVENT_COLUMNS}`,
    [companyId, id],
  );
  return rows[0] && toEvent(rows[0]);
}

/** Fails an event without an attempt (its address is gone or disabled), saying why, if `lease` still holds it. */
export async function failEvent(
  db: Queryable,
  companyId: string,
  id: string,
  lease: string,
  status: 'failed' | 'cancelled',
  error: string,
): Promise<void> {
  await db.query(
    `UPDATE webhook_events
        SET status = $4, next_attempt_at = NULL, lease = NULL, leased_until = NULL, redelivery = false,
            leased_redelivery = false, resume_at = NULL, last_error = $5
      WHERE company_id = $1 AND id = $2 AND status = 'pending' AND lease = $3`,
    [companyId, id, lease, status, error],
  );
}
