import { withTransaction, type Pool, type Queryable } from '../../db/pool.js';
import { isUniqueViolation } from '../../db/sqlstate.js';
import type { DeliveryAttempt, Notifier, WebhookMessage } from './notifier.js';
import { SAMPLE_REPORT_ID } from '../../reports/index.js';
import type { WebhookDelivery } from '../../api-types.js';
import { isoTimestamp } from '../../db/iso-timestamp.js';
import { isUuid } from '../../core/ids.js';

/**
 * One attempt: the message sent, and what its row in the delivery log says of it (written before it is sent).
 */
export interface AttemptPlan {
  message: WebhookMessage;
  /** null for a test delivery: its sample report exists nowhere. */
  reportId: string | null;
  /** A background attempt's lease on its event, renewed for `ms` as the attempt starts. */
  lease?: { token: string; ms: number };
  /** Called as soon as the receiver has responded (or failed to): the caller's slot for the delivery is free. */
  sent?: () => void;
  /**
   * The error to throw when the database fails around the request: before it (nothing was sent: `attempt`
   * undefined) or while its outcome is recorded. The database's own error when absent.
   */
  unrecorded?: (err: unknown, attempt?: DeliveryAttempt) => unknown;
}

/**
 * What an attempt shows until its outcome is recorded: while it is in flight, and for good when the
 * service lost its database (or stopped) before it could record it. The retry is a new attempt.
 */
export const OUTCOME_NOT_RECORDED =
  'no outcome recorded: the delivery is in flight, or the service lost its database before recording it';

/** Tries to number an attempt while others of its webhook-id take the same numbers at once (one wins each try). */
const NUMBERING_TRIES = 5;

/**
 * Makes one attempt, for a publish, the worker and a test delivery alike: its row written to the
 * delivery log first (one statement, on a pooled connection that goes back at once), the request sent
 * holding nothing of the database, then in one transaction its outcome written to the row and `record`
 * run (settling the event, publishing the report, ending the address's run of failures). Undefined when
 * a lease was given and the event is no longer held by it: nothing was sent.
 */
export async function makeAttempt<T>(
  pool: Pool,
  notifier: Notifier,
  companyId: string,
  plan: AttemptPlan,
  record: (db: Queryable, attempt: DeliveryAttempt, deliveryId: string) => Promise<T>,
): Promise<{ deliveryId: string; attempt: DeliveryAttempt; recorded: T } | undefined> {
  const unrecorded = plan.unrecorded ?? ((err: unknown) => err);
  let deliveryId: string | undefined;
  let attempt: DeliveryAttempt;
  try {
    deliveryId = await startAttempt(pool, companyId, plan).catch((err: unknown) => {
      throw unrecorded(err);
    });
    if (deliveryId === undefined) return undefined;
    attempt = await notifier.deliver(plan.message);
  } finally {
    plan.sent?.();
  }
  const id = deliveryId;
  try {
    const recorded = await withTransaction(pool, async (db) => {
      await completeAttempt(db, companyId, id, attempt);
      return record(db, attempt, id);
    });
    return { deliveryId: id, attempt, recorded };
  } catch (err) {
    throw unrecorded(err, attempt);
  }
}

/**
 * Writes an attempt about to be sent to the delivery log and returns its id. With a lease, only while the
 * lease still holds the event, renewing it from now: the request then ends (its time limit) before the lease
 * can, so no other process sends the same webhook-id meanwhile. Undefined when the lease is lost. The
 * attempt's number is one more than the highest of its webhook-id's; the unique index refuses a number
 * another attempt took at the same moment, and the next try counts again.
 */
async function startAttempt(db: Queryable, companyId: string, plan: AttemptPlan): Promise<string | undefined> {
  for (let tries = 1; ; tries++) {
    try {
      const { rows } = await db.query<{ id: string }>(
        `WITH held AS (
           UPDATE webhook_events SET leased_until = clock_timestamp() + $7 * interval '1 millisecond'
            WHERE company_id = $1 AND id = $3 AND lease = $6 AND status = 'pending'
           RETURNING 1)
         INSERT INTO webhook_deliveries (company_id, report_id, webhook_id, url, duration_ms, error, attempt)
         SELECT $1, $2, $3, $4, 0, $5,
                (SELECT coalesce(max(attempt), 0) + 1 FROM webhook_deliveries WHERE company_id = $1 AND webhook_id = $3)
          WHERE $6::uuid IS NULL OR EXISTS (SELECT FROM held)
         RETURNING id`,
        [
          companyId,
          plan.reportId,
          plan.message.webhookId,
          plan.message.url,
          OUTCOME_NOT_RECORDED,
          plan.lease?.token ?? null,
          plan.lease?.ms ?? 0,
        ],
      );
      return rows[0]?.id;
    } catch (err) {
      if (!isUniqueViolation(err) || tries === NUMBERING_TRIES) throw err;
    }
  }
}

/**
 * Records what happened to an attempt. Its time stays the one written as it started (no indexed column
 * changes), so the row is rewritten in place on its page (fillfactor, migration 31) without new index entries.
 */
async function completeAttempt(db: Queryable, companyId: string, id: string, attempt: DeliveryAttempt): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries SET duration_ms = $3, http_status = $4, error = $5, response_excerpt = $6
      WHERE company_id = $1 AND id = $2`,
    [companyId, id, attempt.durationMs, attempt.httpStatus, attempt.error, attempt.responseExcerpt],
  );
}

/** An attempt as the delivery log shows it ($3: the sample report's id, a test delivery's). */
const DELIVERY_COLUMNS = `id, coalesce(report_id::text, $3) AS "reportId", report_id IS NULL AS test,
            CASE WHEN report_id IS NULL THEN '' ELSE webhook_id END AS "eventId", attempt,
            webhook_id AS "webhookId", url,
            ${isoTimestamp('attempted_at')} AS "attemptedAt",
            duration_ms AS "durationMs", http_status AS "httpStatus", error, response_excerpt AS "responseExcerpt"`;

/** The company's latest attempts, newest first; with a report, that report's only. */
export async function listDeliveries(
  db: Queryable,
  companyId: string,
  limit: number,
  reportId?: string,
): Promise<WebhookDelivery[]> {
  const { rows } = await db.query<WebhookDelivery>(
    `SELECT ${DELIVERY_COLUMNS}
       FROM webhook_deliveries WHERE company_id = $1 AND ($4::uuid IS NULL OR report_id = $4)
      ORDER BY attempted_at DESC, id DESC LIMIT $2`,
    [companyId, limit, SAMPLE_REPORT_ID, reportId ?? null],
  );
  return rows;
}

/**
 * A page of the company's attempts, newest first: after one of them (`older`: the page below it) or before
 * it (`newer`), and whether older and newer attempts lie beyond the page. A cursor that is no attempt of
 * the company is the first page.
 */
export async function pageDeliveries(
  db: Queryable,
  companyId: string,
  limit: number,
  { older, newer }: { older?: string; newer?: string },
): Promise<{ deliveries: WebhookDelivery[]; older: boolean; newer: boolean }> {
  const cursor = [newer, older].find((id) => id !== undefined && isUuid(id));
  const backwards = cursor !== undefined && cursor === newer;
  const [beyond, order] = backwards ? ['>', 'ASC'] : ['<', 'DESC'];
  const { rows } = await db.query<WebhookDelivery>(
    `SELECT ${DELIVERY_COLUMNS}
       FROM webhook_deliveries
      WHERE company_id = $1
        AND ($4::uuid IS NULL OR (attempted_at, id) ${beyond}
             (SELECT attempted_at, id FROM webhook_deliveries WHERE company_id = $1 AND id = $4))
      ORDER BY attempted_at ${order}, id ${order} LIMIT $2`,
    [companyId, limit + 1, SAMPLE_REPORT_ID, cursor ?? null],
  );
  const page = rows.slice(0, limit);
  const more = rows.length > limit;
  if (backwards) return { deliveries: page.reverse(), older: true, newer: more };
  return { deliveries: page, older: more, newer: cursor !== undefined };
}
