import type { Queryable } from '../db/pool.js';
import type { DeliveryAttempt } from '../webhook/notifier.js';

export interface DeliveryLogEntry {
  id: string;
  reportId: string;
  webhookId: string;
  url: string;
  attemptedAt: string;
  durationMs: number;
  httpStatus: number | null;
  error: string;
  responseExcerpt: string;
}

export interface AttemptRecord extends DeliveryAttempt {
  reportId: string;
  webhookId: string;
  url: string;
}

/** Writes one attempt to the delivery log and answers its id. */
export async function recordDelivery(db: Queryable, companyId: string, attempt: AttemptRecord): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO webhook_deliveries
       (company_id, report_id, webhook_id, url, attempted_at, duration_ms, http_status, error, response_excerpt)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
    [
      companyId,
      attempt.reportId,
      attempt.webhookId,
      attempt.url,
      attempt.attemptedAt,
      attempt.durationMs,
      attempt.httpStatus,
      attempt.error,
      attempt.responseExcerpt,
    ],
  );
  return rows[0]!.id;
}

/** The company's latest attempts, newest first. */
export async function listDeliveries(db: Queryable, companyId: string, limit: number): Promise<DeliveryLogEntry[]> {
  const { rows } = await db.query<DeliveryLogEntry>(
    `SELECT id, report_id AS "reportId", webhook_id AS "webhookId", url,
            to_char(attempted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "attemptedAt",
            duration_ms AS "durationMs", http_status AS "httpStatus", error, response_excerpt AS "responseExcerpt"
       FROM webhook_deliveries WHERE company_id = $1
      ORDER BY attempted_at DESC, id DESC LIMIT $2`,
    [companyId, limit],
  );
  return rows;
}
