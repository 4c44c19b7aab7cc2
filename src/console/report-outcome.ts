import type { PublishResult } from '../api-types.js';

/** Why a publish sent no webhook, in the inspector's words (PublishResult's not_sent reasons). */
const NOT_SENT: Record<string, string> = {
  not_requested: 'the integration was not notified',
  created_in_application: 'the report was created in the application, so no webhook is due',
  integration_revoked: 'the integration that created it is revoked, so no webhook is due',
  no_webhook_address: 'the company has no webhook address, so no webhook was sent',
};

/** A publish's outcome as the redirect's query carries it (only known words and a timestamp). */
export function publishedQuery(result: PublishResult): string {
  const { webhook } = result;
  const query = new URLSearchParams({ outcome: webhook.outcome });
  if (webhook.outcome === 'not_sent') query.set('reason', webhook.reason);
  if (webhook.outcome === 'sent') query.set('status', String(webhook.status));
  if (webhook.outcome === 'retrying') query.set('next', webhook.nextAttemptAt);
  return query.toString();
}

/** The outcome line for the query a redirect carries; anything else in the query shows nothing. */
export function outcomeOf(query: Record<string, unknown>): string | undefined {
  const { outcome, reason, status, next } = query;
  if (outcome === 'started') return 'Started.';
  if (outcome === 'sent' && typeof status === 'string' && /^\d{3}$/.test(status))
    return `Published; the integration was notified (outcome sent: the receiver answered HTTP ${status}).`;
  if (outcome === 'not_sent' && typeof reason === 'string' && reason in NOT_SENT)
    return `Published; ${NOT_SENT[reason]} (outcome not_sent).`;
  if (outcome === 'retrying' && typeof next === 'string' && !Number.isNaN(Date.parse(next)))
    return `Published; the notification failed and the service keeps trying in the background (outcome retrying, next attempt at ${new Date(next).toISOString()}).`;
  if (outcome === 'failed')
    return 'Published; the notification failed and no attempt will follow (outcome failed): see the delivery log.';
  return undefined;
}
