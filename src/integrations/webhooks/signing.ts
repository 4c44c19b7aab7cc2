import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A Standard Webhooks signing secret: `whsec_` and base64 of 32 random bytes. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/** A message id for the `webhook-id` header (receivers de-duplicate on it). */
export const newWebhookId = (): string => `msg_${randomBytes(16).toString('base64url')}`;

/**
 * The Standard Webhooks headers for one attempt, signed with each secret in force, newest first and
 * space-separated (`v1,<new> v1,<old>` during a rotation's overlap), so a receiver verifies with
 * either. The signatures come from the `standardwebhooks` package itself, so what receivers verify
 * with that package is exactly what is signed here.
 */
export function signedHeaders(
  secrets: readonly string[],
  webhookId: string,
  payload: string,
  at: Date,
): Record<string, string> {
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(webhookId, at, payload)).join(' '),
  };
}
