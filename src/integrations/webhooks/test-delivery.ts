import type { WebhookTestResult } from '../../api-types.js';
import type { Pool } from '../../db/pool.js';
import { conflict, refuse, SLOTS_RETRY_AFTER_SECONDS } from '../../core/errors.js';
import { findWebhookTarget } from './settings.js';
import { completeAttempt, startAttempt } from './deliveries.js';
import { endFailureRun } from './address-health.js';
import type { DeliveryAttempt, Notifier } from './notifier.js';
import { sampleReport } from '../../reports/index.js';
import { newWebhookId } from './signing.js';
import { webhookBody } from './event-types.js';

/** 409 for a company (or its sandbox: `whose`) that has no webhook address. */
export const noWebhookAddress = (whose = 'the company') => conflict(`${whose} has no webhook address: set one first`);

/**
 * Sends the company's receiver a reportPublished request with a sample report, signed like every
 * delivery and marked `webhook-test: true`, and logs the attempt as a publish does: written before
 * it is sent, its outcome after. Each step is one statement on a pooled connection that goes back at
 * once, so nothing of the database is held while the receiver is awaited; the delivery takes one of
 * the notifier's places like a publish's, within the company's share (503 with Retry-After when none
 * is free for it, nothing sent).
 */
export async function sendTestDelivery(
  pool: Pool,
  notifier: Notifier,
  companyId: string,
  whose?: string,
): Promise<WebhookTestResult> {
  const target = await findWebhookTarget(pool, companyId);
  if (!target) throw noWebhookAddress(whose);
  const place = notifier.reserve(companyId);
  if ('refused' in place)
    throw refuse.unavailable(`${place.refused}: test again in a moment`, SLOTS_RETRY_AFTER_SECONDS);
  const { release } = place;
  let attempt: DeliveryAttempt;
  let deliveryId: string;
  const webhookId = newWebhookId();
  try {
    deliveryId = await startAttempt(pool, companyId, { reportId: null, webhookId, url: target.url });
    attempt = await notifier.deliver({
      url: target.url,
      secrets: target.secrets,
      webhookId,
      type: 'report.published',
      payload: webhookBody('report.published', JSON.stringify(sampleReport(new Date()))),
      test: true,
    });
  } finally {
    release();
  }
  await completeAttempt(pool, companyId, deliveryId, attempt);
  if (!attempt.error) await endFailureRun(pool, companyId, target.generation);
  if (attempt.error) throw refuse.badGateway(`webhook delivery failed: ${attempt.error}`);
  return { outcome: 'sent', deliveryId, status: attempt.httpStatus! };
}
