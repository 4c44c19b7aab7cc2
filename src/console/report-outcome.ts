import type { PublishResult } from '../api-types.js';
import { NO_WEBHOOK_ADDRESS } from '../integrations/index.js';
import { utcText } from './time.js';

type NotSentReason = Extract<PublishResult['webhook'], { outcome: 'not_sent' }>['reason'];

/** Why a publish sent no webhook, in the inspector's words (PublishResult's not_sent reasons). */
const NOT_SENT: Record<NotSentReason, string> = {
  not_requested: 'the integration was not notified',
  created_in_application: 'the report was created in the application, so no webhook is due',
  integration_revoked: 'the integration that created it is revoked, so no webhook is due',
  no_webhook_address: `${NO_WEBHOOK_ADDRESS}, so no webhook was sent`,
  not_subscribed: 'the integration does not receive report.published, so no webhook was sent',
};

/** What a publish did, in the inspector's words, for the flash of the page its redirect names. */
export function publishOutcomeText({ webhook }: PublishResult): string {
  switch (webhook.outcome) {
    case 'sent':
      return `Published; the integration was notified (outcome sent: the receiver answered HTTP ${webhook.status}).`;
    case 'not_sent':
      return `Published; ${NOT_SENT[webhook.reason]} (outcome not_sent).`;
    case 'retrying':
      return `Published; the notification failed and the service keeps trying in the background (outcome retrying, next attempt at ${utcText(webhook.nextAttemptAt)}).`;
    default:
      return 'Published; the notification failed and no attempt will follow (outcome failed): see the delivery log.';
  }
}
