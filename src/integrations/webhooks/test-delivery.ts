import type { WebhookTestResult } from '../../api-types.js';
import type { Pool } from '../../db/pool.js';
import { refuse, SLOTS_RETRY_AFTER_SECONDS } from '../../core/errors.js';
import { findWebhookTarget, NO_WEBHOOK_ADDRESS } from './settings.js';
import { makeAttempt } from './deliveries.js';
import { endFailureRun } from './address-health.js';
import type { Notifier } from './notifier.js';
import { sampleReport } from '../../reports/index.js';
import { newWebhookId } from './signing.js';
import { webhookBody } from './event-types.js';
import { recordAudit, modeActedIn, type Doer } from '../../audit/index.js';

/** 409 for a company (or its sandbox: `whose`) that has no webhook address. */
export const noWebhookAddress = (whose = 'the company') =>
  refuse.conflict(`${NO_WEBHOOK_ADDRESS} for ${whose}: set one first`);

/**
 * Sends the company's receiver a reportPublished request with a sample report, signed like every
 * delivery and marked `webhook-test: true`, as one attempt like any other (deliveries.ts makeAttempt:
 * logged before it is sent, nothing of the database held while the receiver is awaited); a 2xx ends the
 * address's run of failures. The delivery takes one of the notifier's slots like a publish's, within
 * the company's share (503 with Retry-After when none is free for it, nothing sent).
 */
export async function sendTestDelivery(
  pool: Pool,
  notifier: Notifier,
  companyId: string,
  whose: string,
  by: Doer,
): Promise<WebhookTestResult> {
  const target = await findWebhookTarget(pool, companyId);
  if (!target) throw noWebhookAddress(whose);
  const slot = notifier.reserve(companyId);
  if ('refused' in slot) throw refuse.unavailable(`${slot.refused}: test again in a moment`, SLOTS_RETRY_AFTER_SECONDS);
  const plan = {
    message: {
      url: target.url,
      secrets: target.secrets,
      webhookId: newWebhookId(),
      type: 'report.published' as const,
      payload: webhookBody('report.published', JSON.stringify(sampleReport(new Date()))),
      test: true,
    },
    reportId: null,
    sent: slot.release,
  };
  const { attempt, deliveryId } = (await makeAttempt(pool, notifier, companyId, plan, async (db, attempt) => {
    if (!attempt.error) await endFailureRun(db, companyId, target.generation);
    const outcome = attempt.error || `HTTP ${attempt.httpStatus}`;
    const details = { world: modeActedIn(companyId, by), url: target.url, outcome };
    await recordAudit(db, by, { action: 'webhook.test_sent', subject: plan.message.webhookId, details });
  }))!;
  if (attempt.error) throw refuse.badGateway(`webhook delivery failed: ${attempt.error}`);
  return { outcome: 'sent', deliveryId, status: attempt.httpStatus! };
}
