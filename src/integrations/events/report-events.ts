import type { EventType, Report } from '../../api-types.js';
import type { Queryable } from '../../db/pool.js';
import { cameThroughApi, type PublishState } from '../../reports/index.js';
import { recordEvent } from './events.js';
import { integrationWebhook, type IntegrationWebhook } from '../webhooks/settings.js';
import { newWebhookId } from '../webhooks/signing.js';

/**
 * Whether a report's event is due, for every type alike: the one place that decides it (a publish adds
 * the inspector's confirmation and its first attempt, publish-without-attempt.ts).
 */

/** Where the report came from: the integration that created it (null in the application) and its service. */
export type EventSource = Pick<PublishState, 'integrationId' | 'fromRestService'>;

/** Why no event of a type is due for a report. */
export type NoEvent = 'created_in_application' | 'integration_revoked' | 'not_subscribed';

/** openapi.yaml's rule (Event): an event is due only for an API report of a live integration that receives its type. */
export function whyNoEvent(source: EventSource, webhook: IntegrationWebhook, type: EventType): NoEvent | undefined {
  if (source.integrationId === null || !cameThroughApi(source)) return 'created_in_application';
  if (webhook.integrationRevoked) return 'integration_revoked';
  if (!webhook.eventTypes.includes(type)) return 'not_subscribed';
  return undefined;
}

/** Whether there is an address to call: without one, a due event is recorded for the feed only (`none`). */
export const hasAddress = (webhook: IntegrationWebhook): boolean =>
  webhook.webhookUrl !== null && webhook.webhookSecrets.length > 0;

/**
 * Records the report's event of `type` when one is due, in the caller's transaction once the report is
 * locked and changed: `pending`, for the background worker to send (the caller never waits for a
 * receiver), or `none` without an address. Returns the event's id, or undefined when none is due.
 */
export async function recordReportEvent(
  db: Queryable,
  companyId: string,
  type: EventType,
  report: Report,
  source: EventSource,
): Promise<string | undefined> {
  const webhook = await integrationWebhook(db, companyId, source.integrationId);
  if (whyNoEvent(source, webhook, type)) return undefined;
  const id = newWebhookId();
  await recordEvent(db, companyId, {
    id,
    type,
    reportId: report.id,
    // whyNoEvent holds: the report came through an integration.
    integrationId: source.integrationId!,
    payload: JSON.stringify(report),
    status: hasAddress(webhook) ? 'pending' : 'none',
  });
  return id;
}
