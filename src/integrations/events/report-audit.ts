import type { PublishResult } from '../../api-types.js';
import { modeActedIn, type AuditEntry, type Doer } from '../../audit/index.js';

/**
 * What the audit trail says of a publish: the report, and whether the integration was notified, in the
 * inspector's words: notified, not notified (asked not to, or skipped after a failed notification: the
 * report still held a failed attempt's webhook-id), retrying in the background, failed, or not sent and why.
 */
export function publishedEntry(
  companyId: string,
  reportId: string,
  by: Doer,
  webhook: PublishResult['webhook'],
  afterFailure: boolean,
): AuditEntry {
  const notification =
    webhook.outcome === 'sent'
      ? 'notified'
      : webhook.outcome === 'retrying'
        ? 'retrying in the background'
        : webhook.outcome === 'failed'
          ? `failed: ${webhook.error}`
          : webhook.reason === 'not_requested'
            ? afterFailure
              ? 'skipped after a failed notification'
              : 'not notified'
            : `not sent: ${webhook.reason}`;
  return {
    action: 'report.published',
    subject: reportId,
    details: { world: modeActedIn(companyId, by), notification },
  };
}

/** What the audit trail says of a start: the report, and live or test. */
export const startedEntry = (companyId: string, reportId: string, by: Doer): AuditEntry => ({
  action: 'report.started',
  subject: reportId,
  details: { world: modeActedIn(companyId, by) },
});
