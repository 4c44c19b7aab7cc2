import type { Queryable } from '../../db/pool.js';
import type { DeliveryAttempt } from './notifier.js';
import { SAMPLE_REPORT_ID } from '../../reports/index.js';
import type { WebhookDelivery } from '../../api-types.js';
import { isoTimestamp } from '../../db/iso-timestamp.js';

/** Where one attempt goes: written to the log before it is sent. */
export interface AttemptTarget {
  /** null for a test delivery: its sample report exists nowhere. */
  reportId: string | null;
  webhookId: string;
  url: string;
  /** A background attempt's lease on its event, renewed for `ms` as the attempt starts. */
  lease?: { token: string; ms: number };
}

/**
 * What an attempt shows until its outcome is recorded: while it is in flight, and for good when the
 * service lost its database (or stopped) before it could record it. The retry is a new attempt.
 */
export const OUTCOME_NOT_RECORDED =
  'no outcome recorded: the delivery is in flight, or the service lost its database before recording it';

/**
 * Writes an attempt about to be sent to the delivery log and answers its id. With a lease, only while the
 * lease still holds the event, renewing it from now: the request then ends (its time limit) before the lease
 * can, so no other process sends the same webhook-id meanwhile. Undefined when the lease is lost.
 */
export async function startLeasedAttempt(
  db: Queryable,
  companyId: string,
  target: AttemptTarget,
): Promise<string | undefined> {
  // The attempt's number: one more than the attempts already logged with its webhook-id.
  const { rows } = await db.query<{ id: string }>(
    `WITH held AS (
       UPDATE webhook_events SET leased_until = clock_timestamp() + $7 * interval '1 millisecond'
        WHERE company_id = $1 AND id = $3 AND lease = $6 AND status = 'pending'
       RETURNING 1)
     INSERT INTO webhook_deliveries (company_id, report_id, webhook_id, url, duration_ms, error, attempt)
     SELECT $1, $2, $3, $4, 0, $5,
            (SELECT count(*) + 1 FROM webhook_deliveries WHERE company_id = $1 AND webhook_id = $3)
      WHERE $6::uuid IS NULL OR EXISTS (SELECT FROM held)
     RETURNING id`,
    [
      companyId,
      target.reportId,
      target.webhookId,
      target.url,
      OUTCOME_NOT_RECORDED,
      target.lease?.token ?? null,
      target.lease?.ms ?? 0,
    ],
  );
  return rows[0]?.id;
}

/** Writes an attempt about to be sent (a publish's own, a test delivery) to the delivery log; answers its id. */
export async function startAttempt(db: Queryable, companyId: string, target: AttemptTarget): Promise<string> {
  return (await startLeasedAttempt(db, companyId, target))!;
}

/** Records what happened to an attempt started with startAttempt. */
export async function completeAttempt(
  db: Queryable,
  companyId: string,
  id: string,
  attempt: DeliveryAttempt,
): Promise<void> {
  await db.query(
    `UPDATE webhook_deliveries
        SET attempted_at = $3, duration_ms = $4, http_status = $5, error = $6, response_excerpt = $7
      WHERE company_id = $1 AND id = $2`,
    [
      companyId,
      id,
      attempt.attemptedAt,
      attempt.durationMs,
      attempt.httpStatus,
      attempt.error,
      attempt.responseExcerpt,
    ],
  );
}

/** The company's latest attempts, newest first; with a report, that report's only. */
export async function listDeliveries(
  db: Queryable,
  companyId: string,
  limit: number,
  reportId?: string,
): Promise<WebhookDelivery[]> {
  const { rows } = await db.query<WebhookDelivery>(
    `SELECT id, coalesce(report_id::text, $3) AS "reportId", report_id IS NULL AS test,
            CASE WHEN report_id IS NULL THEN '' ELSE webhook_id END AS "eventId", attempt,
            webhook_id AS "webhookId", url,
            ${isoTimestamp('attempted_at')} AS "attemptedAt",
            duration_ms AS "durationMs", http_status AS "httpStatus", error, response_excerpt AS "responseExcerpt"
       FROM webhook_deliveries WHERE company_id = $1 AND ($4::uuid IS NULL OR report_id = $4)
      ORDER BY attempted_at DESC, id DESC LIMIT $2`,
    [companyId, limit, SAMPLE_REPORT_ID, reportId ?? null],
  );
  return rows;
}
