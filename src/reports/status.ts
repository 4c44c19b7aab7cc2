import type { Report } from '../api-types.js';
import { refuse } from '../core/errors.js';
import { isUuid } from '../core/ids.js';
import { quoted } from '../core/quoted.js';
import { isoTimestamp } from '../db/iso-timestamp.js';
import type { Queryable } from '../db/pool.js';
import { findForCompany } from './read.js';
import { reportNotFound } from './report-error-wording.js';

/**
 * A report's life: new, in_progress once started, published (and published again). Every statement
 * that changes a report's status or its publish fields (published_url, the publish claim, the pending
 * webhook-id) is here. The create-or-update statement (write-statement.ts) leaves a report that is
 * published or being published as it is; the integrations component orchestrates a publish (claim,
 * delivery, outcome) and a start (with its event) through these functions.
 */

/** A start, as markStarted leaves it: the report, whether it left `new` now, and where it came from. */
/**
 * Whether a publish holds the report's claim now (its webhook delivery in flight): no other publish and
 * no partner update may change the report until the claim ends or runs out. SQL of the row `table`.
 */
export const publishInFlight = (table: string) => `coalesce(${table}.publish_claimed_until > clock_timestamp(), false)`;

export interface Started {
  report: Report;
  /** The report was new and is in progress from this call on; false when it already was. */
  startedNow: boolean;
  /** The partner-API integration that created the report; null for reports created in the application. */
  integrationId: string | null;
  fromRestService: string;
}

/**
 * Starts the report (an inspector applied a template): a new report moves to in_progress, one in
 * progress stays as it is; 404 for no such report, 409 for a published one. The row stays locked for
 * the rest of the caller's transaction, where the integrations component records the start's event.
 */
export async function markStarted(db: Queryable, companyId: string, reportId: string): Promise<Started> {
  if (!isUuid(reportId)) throw refuse.notFound(reportNotFound(reportId));
  const { rows } = await db.query<Omit<Started, 'report' | 'startedNow'> & { status: string }>(
    `WITH found AS (
       SELECT status, integration_id, from_rest_service FROM reports WHERE company_id = $1 AND id = $2 FOR UPDATE
     ), started AS (
       UPDATE reports SET status = 'in_progress', updated_at = clock_timestamp()
        WHERE company_id = $1 AND id = $2 AND status = 'new'
     )
     SELECT status, integration_id AS "integrationId", from_rest_service AS "fromRestService" FROM found`,
    [companyId, reportId],
  );
  const found = rows[0];
  if (!found) throw refuse.notFound(reportNotFound(reportId));
  if (found.status === 'published') throw refuse.conflict(`report ${quoted(reportId)} is published`);
  const report = (await findForCompany(db, companyId, reportId))!;
  const { integrationId, fromRestService } = found;
  return { report, startedNow: found.status === 'new', integrationId, fromRestService };
}

/** The report's own part of a publish, read with its row locked. */
export interface PublishState {
  /** The partner-API integration that created the report; null for reports created in the application. */
  integrationId: string | null;
  fromRestService: string;
  /** The webhook-id of a publish whose delivery failed or whose outcome was lost, reused by its retry. */
  pendingWebhookId: string | null;
  /** Another publish of this report is delivering its webhook now: its claim has not expired. */
  publishInFlight: boolean;
  /** When the report was last published, as PublishPrecondition names it ('' while unpublished). */
  publishedAt: string;
}

/**
 * What a publish may ask of the report's state, decided under the publish's own row lock: the report's
 * last publish as the asker saw it (its updatedAt when it was published, which nothing but a publish
 * changes then; '' while it was unpublished). A form sent twice carries the state before its first
 * publish, so the second finds the report published meanwhile and publishes nothing.
 */
export interface PublishPrecondition {
  publishedAt: string;
}

/**
 * Locks the report for the rest of the (short) transaction and reads its publish state. Two publishes
 * of one report claim it one after the other, so the second sees the first's claim. With a
 * precondition, a report published since the asker saw it is refused (409, PUBLISHED_MEANWHILE).
 */
export async function lockForPublish(
  db: Queryable,
  companyId: string,
  reportId: string,
  precondition?: PublishPrecondition,
): Promise<PublishState | undefined> {
  const state = await readPublishState(db, companyId, reportId, 'FOR UPDATE');
  if (state && precondition && state.publishedAt !== precondition.publishedAt)
    throw refuse.publishedMeanwhile(
      `report ${quoted(reportId)} was published meanwhile (at ${state.publishedAt}): nothing was published or sent now`,
    );
  return state;
}

/** The report's publish state as it is now, without a lock: what a page shows before anyone publishes. */
export async function publishStateOf(
  db: Queryable,
  companyId: string,
  reportId: string,
): Promise<PublishState | undefined> {
  return readPublishState(db, companyId, reportId, '');
}

async function readPublishState(
  db: Queryable,
  companyId: string,
  reportId: string,
  lock: 'FOR UPDATE' | '',
): Promise<PublishState | undefined> {
  if (!isUuid(reportId)) return undefined;
  const { rows } = await db.query<PublishState>(
    `SELECT integration_id AS "integrationId", from_rest_service AS "fromRestService",
            pending_webhook_id AS "pendingWebhookId",
            ${publishInFlight('reports')} AS "publishInFlight",
            CASE WHEN status = 'published' THEN ${isoTimestamp('updated_at')} ELSE '' END AS "publishedAt"
       FROM reports
      WHERE company_id = $1 AND id = $2
        ${lock}`,
    [companyId, reportId],
  );
  return rows[0];
}

/** A report claimed by one publish for the time of its delivery. */
export interface PublishClaim {
  token: string;
  /** The report's updatedAt once published: the webhook carries it, so it is fixed before the delivery. */
  publishedAt: Date;
}

/**
 * Claims the report for one delivery lasting at most `claimMs`, and keeps its webhook-id on the report
 * at once (durably, before anything is sent): if the outcome is never recorded, the retry reuses it.
 */
export async function claimForDelivery(
  db: Queryable,
  companyId: string,
  reportId: string,
  webhookId: string,
  claimMs: number,
): Promise<PublishClaim> {
  const { rows } = await db.query<PublishClaim>(
    `UPDATE reports
        SET publish_claim = gen_random_uuid(), pending_webhook_id = $3,
            publish_claimed_until = clock_timestamp() + $4::integer * interval '1 millisecond'
      WHERE company_id = $1 AND id = $2
      RETURNING publish_claim AS token, date_trunc('milliseconds', clock_timestamp()) AS "publishedAt"`,
    [companyId, reportId, webhookId, claimMs],
  );
  return rows[0]!;
}

/**
 * Publishes (or re-publishes) the report; a later publish that notifies gets a new webhook-id. With a
 * claim, only while that claim is still the report's (false when another publish took it over after it
 * expired), and with the claim's publishedAt as updatedAt, as the webhook said.
 */
export async function markPublished(
  db: Queryable,
  companyId: string,
  reportId: string,
  publishedUrl: string,
  claim?: PublishClaim,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE reports
        SET status = 'published', published_url = $3, pending_webhook_id = NULL,
            publish_claim = NULL, publish_claimed_until = NULL,
            updated_at = coalesce($5::timestamptz, clock_timestamp())
      WHERE company_id = $1 AND id = $2 AND ($4::uuid IS NULL OR publish_claim = $4)`,
    [companyId, reportId, publishedUrl, claim?.token ?? null, claim?.publishedAt ?? null],
  );
  return rowCount === 1;
}

/** Ends a claim whose delivery failed; the report is otherwise as it was, its webhook-id kept for the retry. */
export async function releaseClaim(db: Queryable, companyId: string, reportId: string, claim: PublishClaim) {
  await db.query(
    `UPDATE reports SET publish_claim = NULL, publish_claimed_until = NULL
      WHERE company_id = $1 AND id = $2 AND publish_claim = $3`,
    [companyId, reportId, claim.token],
  );
}
