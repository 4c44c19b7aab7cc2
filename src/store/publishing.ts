import type { Queryable } from '../db/pool.js';
import { isUuid } from './ids.js';

/** What publishing needs to know about a report, read with the report row locked. */
export interface PublishTarget {
  /** The partner-API integration that created the report; null for reports created in the application. */
  integrationId: string | null;
  fromRestService: string;
  integrationRevoked: boolean;
  webhookUrl: string | null;
  webhookSecret: string | null;
  /** The webhook-id of a failed publish, reused by its retry. */
  pendingWebhookId: string | null;
}

/**
 * Locks the report for the rest of the transaction and reads what decides the webhook. Two
 * publishes of one report (or a publish and a partner update) run one after the other.
 */
export async function lockForPublish(
  db: Queryable,
  companyId: string,
  reportId: string,
): Promise<PublishTarget | undefined> {
  if (!isUuid(reportId)) return undefined;
  const { rows } = await db.query<PublishTarget>(
    `SELECT r.integration_id AS "integrationId", r.from_rest_service AS "fromRestService",
            coalesce(i.revoked_at IS NOT NULL, false) AS "integrationRevoked",
            i.webhook_url AS "webhookUrl", i.webhook_secret AS "webhookSecret",
            r.pending_webhook_id AS "pendingWebhookId"
       FROM reports r
       LEFT JOIN integrations i ON i.company_id = r.company_id AND i.id = r.integration_id
      WHERE r.company_id = $1 AND r.id = $2
        FOR UPDATE OF r`,
    [companyId, reportId],
  );
  return rows[0];
}

/** Publishes (or re-publishes) the report; a later publish that notifies gets a new webhook-id. */
export async function markPublished(
  db: Queryable,
  companyId: string,
  reportId: string,
  publishedUrl: string,
): Promise<void> {
  await db.query(
    `UPDATE reports SET status = 'published', published_url = $3, pending_webhook_id = NULL, updated_at = clock_timestamp()
      WHERE company_id = $1 AND id = $2`,
    [companyId, reportId, publishedUrl],
  );
}

/** Remembers the webhook-id of a failed publish so that its retry carries the same one. */
export async function keepPendingWebhookId(
  db: Queryable,
  companyId: string,
  reportId: string,
  webhookId: string,
): Promise<void> {
  await db.query('UPDATE reports SET pending_webhook_id = $3 WHERE company_id = $1 AND id = $2', [
    companyId,
    reportId,
    webhookId,
  ]);
}

/**
 * Moves a new report to in_progress (an inspector applied a template); a report in progress stays
 * as it is. Answers the status found, or undefined for no such report.
 */
export async function startReport(db: Queryable, companyId: string, reportId: string): Promise<string | undefined> {
  if (!isUuid(reportId)) return undefined;
  const { rows } = await db.query<{ status: string }>(
    `WITH found AS (
       SELECT status FROM reports WHERE company_id = $1 AND id = $2 FOR UPDATE
     ), started AS (
       UPDATE reports SET status = 'in_progress', updated_at = clock_timestamp()
        WHERE company_id = $1 AND id = $2 AND status = 'new'
     )
     SELECT status FROM found`,
    [companyId, reportId],
  );
  return rows[0]?.status;
}
