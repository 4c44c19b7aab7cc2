import type { PublishInput, PublishResult, Report } from '../api-types.js';
import type { Pool } from '../db/pool.js';
import { withTransaction } from '../db/pool.js';
import { conflict, HttpError, refuse, SLOTS_RETRY_AFTER_SECONDS } from '../core/errors.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { quoted } from '../core/quoted.js';
import { findForCompany } from '../reports/index.js';
import {
  claimForDelivery,
  lockForPublish,
  markPublished,
  releaseClaim,
  type PublishClaim,
  type PublishTarget,
} from './publish-claims.js';
import { completeAttempt, startAttempt } from './deliveries.js';
import type { DeliveryAttempt, Notifier, WebhookMessage } from './notifier.js';
import { newWebhookId } from './signing.js';

type NotSentReason = Extract<PublishResult['webhook'], { outcome: 'not_sent' }>['reason'];

/** Beyond the delivery's limit and the wait for a connection to record it: the recording's own statements. */
const CLAIM_MARGIN_MS = 5_000;

/** openapi.yaml's rule (PublishResult): the webhook is due only for an API report of a live integration with an address, when confirmed. */
function whyNoWebhook(target: PublishTarget, notifyIntegration: boolean): NotSentReason | undefined {
  if (!notifyIntegration) return 'not_requested';
  if (target.integrationId === null || target.fromRestService === '') return 'created_in_application';
  if (target.integrationRevoked) return 'integration_revoked';
  if (target.webhookUrl === null || target.webhookSecrets.length === 0) return 'no_webhook_address';
  return undefined;
}

/** A claimed delivery: what is sent, and what step 3 needs to record it. */
interface Delivery {
  message: WebhookMessage;
  deliveryId: string;
  claim: PublishClaim;
  /** Local time when the claim expires (Retry-After when the outcome cannot be recorded). */
  claimExpires: number;
  /** The report as it is once published: the webhook's body and the 200's report. */
  report: Report;
  release: () => void;
}

/**
 * Publishes a report and, when due, delivers the webhook first, in three steps so that no database
 * connection, transaction or lock is held while the receiver takes its time:
 * 1. one short transaction claims the report (a second publish gets 409 until the claim ends or
 *    expires), keeps the attempt's webhook-id on it and writes the attempt to the delivery log;
 * 2. the delivery, holding only one of the notifier's places (503 with Retry-After when none is free,
 *    or when the company already holds its share of them);
 * 3. a second short transaction records the outcome and, on a 2xx, publishes.
 * A failed delivery leaves the report unchanged (502); its retry reuses the webhook-id. When step 3
 * cannot reach the database, the attempt stays in the log without an outcome, the claim runs out by
 * itself, and the caller is told (503) when to retry, again with the same webhook-id.
 * Undefined when the company has no such report.
 */
export async function publishReport(
  pool: Pool,
  notifier: Notifier,
  companyId: string,
  reportId: string,
  input: PublishInput,
): Promise<PublishResult | undefined> {
  const claimed = await claim(pool, notifier, companyId, reportId, input);
  if (!claimed || 'webhook' in claimed) return claimed;
  let attempt: DeliveryAttempt;
  try {
    attempt = await notifier.deliver(claimed.message);
  } finally {
    claimed.release();
  }
  return recordOutcome(pool, companyId, reportId, claimed, attempt);
}

/** Step 1: publishes at once when no webhook is due, otherwise claims the report for the delivery. */
async function claim(
  pool: Pool,
  notifier: Notifier,
  companyId: string,
  reportId: string,
  { publishedUrl, notifyIntegration }: PublishInput,
): Promise<PublishResult | Delivery | undefined> {
  const claimMs = notifier.timeoutMs + (pool.options.connectionTimeoutMillis ?? 0) + CLAIM_MARGIN_MS;
  // A place is taken inside the transaction, once the webhook is known to be due, and given back if
  // the transaction does not commit.
  let release: (() => void) | undefined;
  try {
    return await withTransaction(pool, async (db) => {
      const target = await lockForPublish(db, companyId, reportId);
      if (!target) return undefined;
      if (target.publishInFlight)
        throw conflict(`report ${quoted(reportId)} is being published: its webhook delivery is in flight`);
      const reason = whyNoWebhook(target, notifyIntegration);
      if (reason) {
        await markPublished(db, companyId, reportId, publishedUrl);
        const report = (await findForCompany(db, companyId, reportId))!;
        return { report, webhook: { outcome: 'not_sent' as const, reason } };
      }
      const place = notifier.reserve(companyId);
      if ('refused' in place)
        throw refuse.unavailable(`${place.refused}: publish again in a moment`, SLOTS_RETRY_AFTER_SECONDS);
      release = place.release;

      const webhookId = target.pendingWebhookId ?? newWebhookId();
      const url = target.webhookUrl!;
      const claim = await claimForDelivery(db, companyId, reportId, webhookId, claimMs);
      const deliveryId = await startAttempt(db, companyId, { reportId, webhookId, url });
      const current = (await findForCompany(db, companyId, reportId))!;
      // The claim keeps partner updates out until step 3, so this is exactly what step 3 publishes.
      const report = {
        ...current,
        status: 'published' as const,
        publishedUrl,
        updatedAt: claim.publishedAt.toISOString(),
      };
      const message = { url, secrets: target.webhookSecrets, webhookId, payload: JSON.stringify(report) };
      return { message, deliveryId, claim, claimExpires: Date.now() + claimMs, report, release };
    });
  } catch (err) {
    release?.();
    throw err;
  }
}

/**
 * Step 3: the attempt's outcome in the delivery log and, on a 2xx, the report published; a report
 * deleted during the delivery (a sandbox wiped) cannot be, and the answer says so beside the webhook sent.
 */
async function recordOutcome(
  pool: Pool,
  companyId: string,
  reportId: string,
  { deliveryId, claim: claimed, claimExpires, report }: Delivery,
  attempt: DeliveryAttempt,
): Promise<PublishResult> {
  let published: 'published' | 'deleted' | false;
  try {
    published = await withTransaction(pool, async (db) => {
      await completeAttempt(db, companyId, deliveryId, attempt);
      if (attempt.error) {
        await releaseClaim(db, companyId, reportId, claimed);
        return false;
      }
      if (await markPublished(db, companyId, reportId, report.publishedUrl, claimed)) return 'published';
      // The webhook went out: a report deleted meanwhile (its sandbox wiped) is answered as sent.
      return (await findForCompany(db, companyId, reportId)) ? false : 'deleted';
    });
  } catch (err) {
    if (!isDatabaseUnavailable(err) && !(err instanceof HttpError && err.status === 503)) throw err;
    const retryAfter = Math.max(1, Math.ceil((claimExpires - Date.now()) / 1000));
    const outcome = attempt.error || `the receiver answered HTTP ${attempt.httpStatus}`;
    throw refuse.unavailable(
      `database unavailable after the webhook delivery (${outcome}), so its outcome is not recorded: publish again in ${retryAfter} s; the retry carries the same webhook-id`,
      retryAfter,
    );
  }
  if (attempt.error) throw refuse.badGateway(`webhook delivery failed: ${attempt.error}`);
  if (!published)
    throw conflict(
      `report ${quoted(reportId)}: its claim expired during the delivery and another publish has taken it over`,
    );
  const webhook = { outcome: 'sent' as const, deliveryId, status: attempt.httpStatus! };
  return published === 'deleted' ? { report, webhook, reportDeleted: true } : { report, webhook };
}
