import type { components } from '../generated/api.js';
import type { Pool } from './db/pool.js';
import { withTransaction } from './db/pool.js';
import { HttpError } from './errors.js';
import { findForCompany } from './store/reports.js';
import { keepPendingWebhookId, lockForPublish, markPublished, type PublishTarget } from './store/publishing.js';
import { recordDelivery } from './store/webhook-deliveries.js';
import type { Notifier } from './webhook/notifier.js';
import { newWebhookId } from './webhook/signing.js';

export type PublishInput = components['schemas']['PublishInput'];
export type PublishResult = components['schemas']['PublishResult'];
type NotSentReason = Extract<PublishResult['webhook'], { outcome: 'not_sent' }>['reason'];

/** DESIGN's rule: the webhook is due only for an API report of a live integration with an address, when confirmed. */
function whyNoWebhook(target: PublishTarget, notifyIntegration: boolean): NotSentReason | undefined {
  if (!notifyIntegration) return 'not_requested';
  if (target.integrationId === null || target.fromRestService === '') return 'created_in_application';
  if (target.integrationRevoked) return 'integration_revoked';
  if (target.webhookUrl === null || target.webhookSecret === null) return 'no_webhook_address';
  return undefined;
}

/**
 * Publishes a report and, when due, delivers the webhook before anything is committed: the report
 * row stays locked during the delivery, and a failed delivery rolls the publish back to a savepoint,
 * so the report is unchanged while the attempt (and the webhook-id its retry reuses) is kept.
 * Undefined when the company has no such report; 502 naming the cause when the delivery failed.
 */
export async function publishReport(
  pool: Pool,
  notifier: Notifier,
  companyId: string,
  reportId: string,
  { publishedUrl, notifyIntegration }: PublishInput,
): Promise<PublishResult | undefined> {
  const outcome = await withTransaction(pool, async (db) => {
    const target = await lockForPublish(db, companyId, reportId);
    if (!target) return undefined;
    await db.query('SAVEPOINT publish');
    await markPublished(db, companyId, reportId, publishedUrl);
    const report = (await findForCompany(db, companyId, reportId))!;
    const reason = whyNoWebhook(target, notifyIntegration);
    if (reason) return { report, webhook: { outcome: 'not_sent' as const, reason } };

    const message = {
      url: target.webhookUrl!,
      secret: target.webhookSecret!,
      webhookId: target.pendingWebhookId ?? newWebhookId(),
    };
    const attempt = await notifier.deliver({ ...message, payload: JSON.stringify(report) });
    if (attempt.error) {
      await db.query('ROLLBACK TO SAVEPOINT publish');
      await keepPendingWebhookId(db, companyId, reportId, message.webhookId);
    }
    const deliveryId = await recordDelivery(db, companyId, {
      ...attempt,
      reportId,
      webhookId: message.webhookId,
      url: message.url,
    });
    if (attempt.error) return { failure: attempt.error };
    return { report, webhook: { outcome: 'sent' as const, deliveryId, status: attempt.httpStatus! } };
  });
  if (outcome && 'failure' in outcome) throw new HttpError(502, `webhook delivery failed: ${outcome.failure}`);
  return outcome;
}
