import { randomUUID } from 'node:crypto';
import type { PublishInput, PublishResult, Report, WhenDeliveryFails } from '../../api-types.js';
import { withTransaction, type Pool, type Queryable } from '../../db/pool.js';
import { isRefusal, refuse } from '../../core/errors.js';
import { isDatabaseUnavailable } from '../../db/unavailable.js';
import { quoted } from '../../core/quoted.js';
import {
  beingPublished,
  claimForDelivery,
  findForCompany,
  lockForPublish,
  markPublished,
  releaseClaim,
  type PublishClaim,
  type PublishPrecondition,
} from '../../reports/index.js';
import { makeAttempt } from '../webhooks/deliveries.js';
import { settleAttempt, type RetryPolicy } from './event-life.js';
import { placeEvents } from './feed-positions.js';
import { forgetSendingEvent, recordSendingEvent } from './events.js';
import { failDisabledEvents } from './event-batches.js';
import { publishForLater, publishIfNoAttempt } from './publish-without-attempt.js';
import type { DeliveryAttempt, Notifier, WebhookMessage } from '../webhooks/notifier.js';
import { integrationWebhook } from '../webhooks/settings.js';
import { newWebhookId } from '../webhooks/signing.js';
import { webhookBody } from '../webhooks/event-types.js';
import { recordAudit, type Doer } from '../../audit/index.js';
import { publishedEntry } from './report-audit.js';

/** Beyond the delivery's limit and the wait for a connection to record it: the recording's own statements. */
const CLAIM_MARGIN_MS = 5_000;

/** A claimed delivery: what is sent, and what step 3 needs to record it. */
interface Delivery {
  message: WebhookMessage;
  claim: PublishClaim;
  /** Local time when the claim expires (Retry-After when the outcome cannot be recorded). */
  claimExpires: number;
  /** The report as it is once published: the webhook's body and the 200's report. */
  report: Report;
  release: () => void;
  /** The integration the event belongs to, and which of its addresses the attempt goes to. */
  integrationId: string;
  generation: number;
  /** The attempt's hold on its event, recorded as it is sent. */
  lease: string;
}

/** How a publish delivers: the notifier of its first attempt, and the retry policy of the events after it. */
export interface PublishDelivery {
  notifier: Notifier;
  policy: RetryPolicy;
}

/**
 * Publishes a report and, when due, delivers the webhook first, in three steps so that no database
 * connection, transaction or lock is held while the receiver takes its time:
 * 1. one short transaction claims the report (a second publish gets 409 until the claim ends or
 *    expires), keeps the attempt's webhook-id on it and records its event as it is sent;
 * 2. the attempt, made as every attempt is (deliveries.ts makeAttempt: logged, then sent), holding only
 *    one of the notifier's slots (when none is free, or the company holds its share of them: 503 with
 *    Retry-After, or, with `"retry"`, published at once, its event waiting);
 * 3. the attempt's transaction records the outcome: with `whenDeliveryFails: "fail"`, a 2xx publishes
 *    and records the event, delivered, and a failure leaves the report unchanged (502; its retry reuses
 *    the webhook-id); with `"retry"`, the report is published either way and its event recorded and
 *    settled by the attempt (event-life.ts), for the background to try again. When step 3
 * cannot reach the database, the attempt stays in the log without an outcome, the claim runs out by
 * itself, and the caller is told (503) when to retry, again with the same webhook-id.
 * The report's status and publish fields change through the reports component (its status.ts); this
 * module decides the webhook, and keeps the attempts and the events. Undefined when the company has no
 * such report. With a precondition (the console's form: the report as its page showed it), a report
 * published since is refused in step 1 under its row lock (status.ts lockForPublish); the API passes none,
 * as a publish may be repeated there.
 */
export async function publishReport(
  pool: Pool,
  { notifier, policy }: PublishDelivery,
  companyId: string,
  reportId: string,
  input: PublishInput,
  by: Doer,
  precondition?: PublishPrecondition,
): Promise<PublishResult | undefined> {
  const of: PublishOf = { policy, companyId, reportId, mode: input.whenDeliveryFails ?? 'fail', by };
  const claimed = await claim(pool, notifier, of, input, precondition);
  if (!claimed) return claimed;
  if ('webhook' in claimed) return placed(pool, claimed);
  const plan = {
    message: claimed.message,
    reportId,
    sent: claimed.release,
    unrecorded: (err: unknown, attempt?: DeliveryAttempt) => notRecorded(err, claimed, attempt),
  };
  const made = await makeAttempt(pool, notifier, companyId, plan, (db, attempt, deliveryId) =>
    recordOutcome(db, of, claimed, attempt, deliveryId),
  );
  return placed(pool, await resultOf(pool, of, claimed, made!));
}

/** The publish being made: of which report, how its failures are handled, and who publishes. */
interface PublishOf {
  policy: RetryPolicy;
  companyId: string;
  reportId: string;
  mode: WhenDeliveryFails;
  by: Doer;
}

/**
 * The publish's result; its event (if any) is placed in the feed without waiting, since other companies'
 * events may come first; if placing fails, a later placer places it.
 */
function placed(pool: Pool, result: PublishResult): PublishResult {
  if ('eventId' in result.webhook) void placeEvents(pool).catch(() => undefined);
  return result;
}

/** Step 1: publishes at once when no webhook is due, otherwise claims the report for the delivery. */
async function claim(
  pool: Pool,
  notifier: Notifier,
  { companyId, reportId, mode, by }: PublishOf,
  { publishedUrl, notifyIntegration }: PublishInput,
  precondition: PublishPrecondition | undefined,
): Promise<PublishResult | Delivery | undefined> {
  const claimMs = notifier.timeoutMs + (pool.options.connectionTimeoutMillis ?? 0) + CLAIM_MARGIN_MS;
  // A slot is taken inside the transaction, once the webhook is known to be due, and given back if
  // the transaction does not commit.
  let release: (() => void) | undefined;
  try {
    return await withTransaction(pool, async (db) => {
      const state = await lockForPublish(db, companyId, reportId, precondition);
      if (!state) return undefined;
      if (state.publishInFlight) throw refuse.conflictForNow(beingPublished(`report ${quoted(reportId)}`));
      const target = { ...state, ...(await integrationWebhook(db, companyId, state.integrationId)) };
      const webhookId = target.pendingWebhookId ?? newWebhookId();
      const publishing = { companyId, reportId, publishedUrl, webhookId, mode, integrationId: state.integrationId };
      // Published now with no attempt, or for the background: recorded in the trail in this transaction.
      const afterFailure = target.pendingWebhookId !== null;
      const audited = async (result: PublishResult) => {
        await recordAudit(db, by, publishedEntry(companyId, reportId, by, result.webhook, afterFailure));
        return result;
      };
      const published = await publishIfNoAttempt(db, target, notifyIntegration, publishing);
      if (published) return audited(published);
      const slot = notifier.reserve(companyId);
      if ('refused' in slot) return audited(await publishForLater(db, slot.refused, publishing));
      release = slot.release;

      const url = target.webhookUrl!;
      const claim = await claimForDelivery(db, companyId, reportId, webhookId, claimMs);
      const current = (await findForCompany(db, companyId, reportId))!;
      // The claim keeps partner updates out until step 3, so this is exactly what step 3 publishes.
      const report = {
        ...current,
        status: 'published' as const,
        publishedUrl,
        updatedAt: claim.publishedAt.toISOString(),
      };
      const type = 'report.published' as const;
      const payload = webhookBody(type, JSON.stringify(report));
      const message = { url, secrets: target.webhookSecrets, webhookId, type, payload } as const;
      const held = { integrationId: state.integrationId!, generation: target.webhookGeneration, lease: randomUUID() };
      const event = { id: webhookId, type, reportId, payload: JSON.stringify(report), ...held };
      await recordSendingEvent(db, companyId, event);
      return { message, claim, claimExpires: Date.now() + claimMs, report, release, ...held };
    });
  } catch (err) {
    release?.();
    throw err;
  }
}

/**
 * Step 3, in the attempt's transaction (its outcome written to the delivery log): on a 2xx, or with
 * `"retry"`, the report published, its event settled and the publish recorded in the audit trail; with
 * `"fail"` and a failure, the claim released and the event forgotten (false). A report deleted during the
 * delivery (a sandbox wiped) cannot be published, and the result says so beside the webhook sent.
 */
async function recordOutcome(
  db: Queryable,
  { policy, companyId, reportId, mode, by }: PublishOf,
  { claim: claimed, report, message, generation, lease }: Delivery,
  attempt: DeliveryAttempt,
  deliveryId: string,
): Promise<{ webhook: PublishResult['webhook']; deleted: boolean; disabled?: string } | false> {
  if (attempt.error && mode === 'fail') {
    await releaseClaim(db, companyId, reportId, claimed);
    await forgetSendingEvent(db, companyId, message.webhookId, lease);
    return false;
  }
  // A report deleted meanwhile (its sandbox wiped) cannot be published, yet its webhook was due.
  const deleted = !(await markPublished(db, companyId, reportId, report.publishedUrl, claimed));
  if (deleted && (await findForCompany(db, companyId, reportId))) return false;
  // The event is held by this attempt from the start, so only its outcome settles it; another publish of
  // the report that has taken the claim over holds it now.
  const eventId = message.webhookId;
  const settled = await settleAttempt(db, companyId, eventId, { ...attempt, lease, generation }, policy);
  if (!settled) throw claimTakenOver(reportId);
  const webhook: PublishResult['webhook'] =
    settled.status === 'delivered'
      ? { outcome: 'sent', eventId, deliveryId, status: attempt.httpStatus! }
      : settled.status === 'pending'
        ? { outcome: 'retrying', eventId, error: settled.error, nextAttemptAt: settled.nextAttemptAt }
        : { outcome: 'failed', eventId, error: settled.error };
  await recordAudit(db, by, publishedEntry(companyId, reportId, by, webhook, false));
  return { webhook, deleted, disabled: settled.disabled };
}

/**
 * When the database fails before the request (nothing sent) or while its outcome is recorded, the claim
 * runs out by itself: 503 saying when to publish again; the retry carries the same webhook-id.
 */
function notRecorded(err: unknown, { claimExpires }: Delivery, attempt?: DeliveryAttempt): unknown {
  if (!isDatabaseUnavailable(err) && !isRefusal(err, 'UNAVAILABLE')) return err;
  const retryAfter = Math.max(1, Math.ceil((claimExpires - Date.now()) / 1000));
  const again = `publish again in ${retryAfter} s; the retry carries the same webhook-id`;
  if (!attempt)
    return refuse.unavailable(`database unavailable before the webhook delivery, nothing sent: ${again}`, retryAfter);
  const outcome = attempt.error || `the receiver answered HTTP ${attempt.httpStatus}`;
  return refuse.unavailable(
    `database unavailable after the webhook delivery (${outcome}), so its outcome is not recorded: ${again}`,
    retryAfter,
  );
}

/** The publish's result once step 3 has committed. */
async function resultOf(
  pool: Pool,
  { companyId, reportId, mode }: PublishOf,
  { report }: Delivery,
  { attempt, recorded }: { attempt: DeliveryAttempt; recorded: Awaited<ReturnType<typeof recordOutcome>> },
): Promise<PublishResult> {
  if (attempt.error && mode === 'fail') throw refuse.badGateway(`webhook delivery failed: ${attempt.error}`);
  if (!recorded) throw claimTakenOver(reportId);
  const { webhook, deleted, disabled } = recorded;
  // Those left when this fails (the database gone) fail as the worker takes them.
  if (disabled) await failDisabledEvents(pool, companyId, disabled).catch(() => undefined);
  return deleted ? { report, webhook, reportDeleted: true } : { report, webhook };
}

const claimTakenOver = (reportId: string) =>
  refuse.conflict(
    `report ${quoted(reportId)}: its claim expired during the delivery and another publish has taken it over`,
  );
