import type { PublishResult, Report, WhenDeliveryFails } from '../../api-types.js';
import { refuse, SLOTS_RETRY_AFTER_SECONDS } from '../../core/errors.js';
import type { Queryable } from '../../db/pool.js';
import { findForCompany, markPublished, publishStateOf, type PublishState } from '../../reports/index.js';
import { recordEvent } from './events.js';
import { hasAddress, whyNoEvent } from './report-events.js';
import { integrationWebhook, type IntegrationWebhook } from '../webhooks/settings.js';

/**
 * The publishes that make no attempt while the inspector waits (publish.ts, step 1, in its
 * transaction): no webhook is due; it is due but there is nobody to call (no address: the event is
 * recorded for the feed); the address is disabled; or no delivery slot is free. With
 * `whenDeliveryFails: "fail"` the last two refuse (502, 503) and publish nothing; with `"retry"` the
 * report is published and its event recorded, failed or waiting for the background.
 */

/** What decides a publish's webhook: the report's publish state and its integration's webhook. */
export type PublishTarget = PublishState & IntegrationWebhook;

type NotSentReason = Extract<PublishResult['webhook'], { outcome: 'not_sent' }>['reason'];

/** One publish being decided. */
export interface PublishNow {
  companyId: string;
  reportId: string;
  publishedUrl: string;
  /** The event's id if one is recorded: the webhook-id its attempts send. */
  webhookId: string;
  /** The integration that created the report: its event belongs to it. */
  integrationId: string | null;
  mode: WhenDeliveryFails;
}

/**
 * openapi.yaml's rule (PublishResult): the webhook is due only when confirmed and its event is due
 * (report-events.ts: an API report of a live integration that receives publishes), to an address.
 */
function whyNoWebhook(target: PublishTarget, notifyIntegration: boolean): NotSentReason | undefined {
  if (!notifyIntegration) return 'not_requested';
  return whyNoEvent(target, target, 'report.published') ?? (hasAddress(target) ? undefined : 'no_webhook_address');
}

/**
 * Whether a publish of the report that confirms the notification would send the webhook now (its
 * rules above hold: an API report, its integration not revoked and receiving publishes, a webhook
 * address): the application
 * asks the inspector "Notify the integration?" only then. Undefined when the company has no such report.
 */
export async function notificationApplies(db: Queryable, companyId: string, reportId: string) {
  const state = await publishStateOf(db, companyId, reportId);
  if (!state) return undefined;
  const webhook = await integrationWebhook(db, companyId, state.integrationId);
  return whyNoWebhook({ ...state, ...webhook }, true) === undefined;
}

/** Publishes the report and records its event; returns the report and when the event is due (pending only). */
async function publishWithEvent(
  db: Queryable,
  { companyId, reportId, publishedUrl, webhookId, integrationId }: PublishNow,
  event: { status: 'pending' | 'failed' | 'none'; error: string },
): Promise<{ report: Report; due: string | null }> {
  await markPublished(db, companyId, reportId, publishedUrl);
  const report = (await findForCompany(db, companyId, reportId))!;
  const due = await recordEvent(db, companyId, {
    id: webhookId,
    type: 'report.published',
    reportId,
    // An event is due only for a report of an integration (whyNoWebhook).
    integrationId: integrationId!,
    payload: JSON.stringify(report),
    status: event.status,
    lastError: event.error,
  });
  return { report, due };
}

/** The result of a publish that makes no attempt now, or undefined when the webhook is due and can be sent. */
export async function publishIfNoAttempt(
  db: Queryable,
  target: PublishTarget,
  notifyIntegration: boolean,
  now: PublishNow,
): Promise<PublishResult | undefined> {
  const reason = whyNoWebhook(target, notifyIntegration);
  if (reason === 'no_webhook_address') {
    // Due all the same: the event is recorded for the partner's feed, with nobody to call.
    const { report } = await publishWithEvent(db, now, { status: 'none', error: '' });
    return { report, webhook: { outcome: 'not_sent', reason, eventId: now.webhookId } };
  }
  if (reason) {
    await markPublished(db, now.companyId, now.reportId, now.publishedUrl);
    const report = (await findForCompany(db, now.companyId, now.reportId))!;
    return { report, webhook: { outcome: 'not_sent', reason } };
  }
  if (target.webhookDisabledReason === '') return undefined;
  const error = `the webhook address is disabled: ${target.webhookDisabledReason}`;
  if (now.mode === 'fail') throw refuse.badGateway(`webhook delivery failed: ${error}; set it again to enable it`);
  const { report } = await publishWithEvent(db, now, { status: 'failed', error });
  return { report, webhook: { outcome: 'failed', eventId: now.webhookId, error } };
}

/** No delivery slot is free: 503 ("fail"), or published with its event waiting its turn in the background ("retry"). */
export async function publishForLater(db: Queryable, refused: string, now: PublishNow): Promise<PublishResult> {
  if (now.mode === 'fail') throw refuse.unavailable(`${refused}: publish again in a moment`, SLOTS_RETRY_AFTER_SECONDS);
  const error = `not attempted yet: ${refused}`;
  const { report, due } = await publishWithEvent(db, now, { status: 'pending', error });
  return { report, webhook: { outcome: 'retrying', eventId: now.webhookId, error, nextAttemptAt: due! } };
}
