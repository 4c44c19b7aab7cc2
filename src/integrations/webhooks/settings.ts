import type { Queryable } from '../../db/pool.js';
import { isoTimestamp } from '../../db/iso-timestamp.js';
import type { EventType, SecretRotation, WebhookSettings } from '../../api-types.js';
import { DEFAULT_EVENT_TYPES } from './event-types.js';

/** Why nothing can be sent, in every refusal and outcome that says so: the API's, an event's, the console's. */
export const NO_WEBHOOK_ADDRESS = 'no webhook address is set';

/**
 * SQL of the secrets a delivery of integration `alias` signs with, newest first: the current one,
 * and the previous one until its overlap ends. The database clock decides (now()), so every server
 * process agrees on the moment the old secret stops signing, whatever its own clock says.
 */
const signingSecretsSql = (alias: string): string =>
  `array_remove(ARRAY[${alias}.webhook_secret,
     CASE WHEN ${alias}.previous_secret_expires_at > now() THEN ${alias}.previous_webhook_secret END], NULL)`;

/**
 * Sets the webhook address and its signing secret on the company's active integration, starting
 * one when none is active; the upsert on the one-active-integration index makes that race-free.
 * The new secret replaces the previous ones at once (no overlap): a new address is a new receiver.
 * Setting it (the same address included) enables an address that was disabled and starts a new
 * generation: outcomes of attempts sent before no longer count for it. The event types are set when
 * given, and kept otherwise (DEFAULT_EVENT_TYPES for an integration this starts).
 */
export async function setWebhook(
  db: Queryable,
  companyId: string,
  url: string,
  secret: string,
  eventTypes?: readonly EventType[],
): Promise<WebhookSettings> {
  const { rows } = await db.query<WebhookSettings>(
    `INSERT INTO integrations (company_id, webhook_url, webhook_secret, event_types)
     VALUES ($1, $2, $3, coalesce($4::text[], $5::text[]))
     ON CONFLICT (company_id) WHERE revoked_at IS NULL
       DO UPDATE SET webhook_url = EXCLUDED.webhook_url, webhook_secret = EXCLUDED.webhook_secret,
                     event_types = coalesce($4::text[], integrations.event_types),
                     previous_webhook_secret = NULL, previous_secret_expires_at = NULL,
                     webhook_disabled_reason = '', webhook_failing_since = NULL,
                     webhook_last_failure_at = NULL, webhook_paused_until = NULL,
                     webhook_generation = integrations.webhook_generation + 1
     RETURNING webhook_url AS url, webhook_secret AS secret, event_types AS "eventTypes"`,
    [companyId, url, secret, eventTypes ?? null, DEFAULT_EVENT_TYPES],
  );
  return rows[0]!;
}

/**
 * Replaces the signing secret of the company's webhook, keeping the current one signing for
 * overlapSeconds more (by the database clock). A secret still in its overlap is dropped: only the
 * newest two ever sign. Undefined when the company has no webhook address.
 */
export async function rotateSecret(
  db: Queryable,
  companyId: string,
  secret: string,
  overlapSeconds: number,
): Promise<SecretRotation | undefined> {
  // One statement on the locked row: concurrent rotations run one after the other, each keeping
  // the secret the one before it made.
  const { rows } = await db.query<SecretRotation>(
    `UPDATE integrations
        SET previous_webhook_secret = CASE WHEN $3::int > 0 THEN webhook_secret END,
            previous_secret_expires_at = CASE WHEN $3::int > 0 THEN now() + make_interval(secs => $3::int) END,
            webhook_secret = $2
      WHERE company_id = $1 AND revoked_at IS NULL AND webhook_url IS NOT NULL
      RETURNING webhook_secret AS secret,
                ${isoTimestamp('previous_secret_expires_at')} AS "previousSecretExpiresAt"`,
    [companyId, secret, overlapSeconds],
  );
  return rows[0];
}

export interface WebhookTarget {
  url: string;
  secrets: string[];
  /** Which address this is (webhook_generation): an attempt's outcome counts only for the one it was sent to. */
  generation: number;
  /** Why the address is disabled ("" while active): background attempts skip it, a test delivery does not. */
  disabledReason: string;
}

/** Where the company's webhook goes, the secrets in force and whether it is disabled; undefined without an address. */
export async function findWebhookTarget(db: Queryable, companyId: string): Promise<WebhookTarget | undefined> {
  const { rows } = await db.query<WebhookTarget>(
    `SELECT i.webhook_url AS url, ${signingSecretsSql('i')} AS secrets, i.webhook_disabled_reason AS "disabledReason",
            i.webhook_generation AS generation
       FROM integrations i
      WHERE i.company_id = $1 AND i.revoked_at IS NULL AND i.webhook_url IS NOT NULL`,
    [companyId],
  );
  return rows[0];
}

/** What an event of a report (its publish, its start) needs of the integration that created the report. */
export interface IntegrationWebhook {
  integrationRevoked: boolean;
  /** The event types the integration receives. */
  eventTypes: EventType[];
  webhookUrl: string | null;
  /** The secrets the webhook signs with, newest first (two during a rotation's overlap); empty without one. */
  webhookSecrets: string[];
  /** Why the company's address is disabled; "" while it is active. */
  webhookDisabledReason: string;
  webhookGeneration: number;
}

/** A report created in the application has no integration: nothing to revoke, nobody to call. */
const NO_INTEGRATION: IntegrationWebhook = {
  integrationRevoked: false,
  eventTypes: [],
  webhookUrl: null,
  webhookSecrets: [],
  webhookDisabledReason: '',
  webhookGeneration: 0,
};

/**
 * The integration's part of a report's event, read in the transaction of the publish or start after
 * the report is locked (a revocation committed before this read is seen, so nobody is notified).
 */
export async function integrationWebhook(
  db: Queryable,
  companyId: string,
  integrationId: string | null,
): Promise<IntegrationWebhook> {
  if (integrationId === null) return NO_INTEGRATION;
  const { rows } = await db.query<IntegrationWebhook>(
    `SELECT i.revoked_at IS NOT NULL AS "integrationRevoked", i.event_types AS "eventTypes", i.webhook_url AS "webhookUrl",
            ${signingSecretsSql('i')} AS "webhookSecrets", i.webhook_disabled_reason AS "webhookDisabledReason",
            i.webhook_generation AS "webhookGeneration"
       FROM integrations i WHERE i.company_id = $1 AND i.id = $2`,
    [companyId, integrationId],
  );
  return rows[0] ?? NO_INTEGRATION;
}

/** Where an attempt of an event goes now, or why none can: its integration revoked, no address, or disabled. */
export type EventTarget =
  | { url: string; secrets: string[]; generation: number }
  | { refused: 'revoked' | 'no_address' | 'disabled'; reason: string };

/** The webhook target of an attempt now of an event of `integrationId` (the address and secrets in force). */
export async function eventTarget(db: Queryable, companyId: string, integrationId: string): Promise<EventTarget> {
  const { rows } = await db.query<WebhookTarget & { revoked: boolean }>(
    `SELECT i.webhook_url AS url, ${signingSecretsSql('i')} AS secrets, i.webhook_disabled_reason AS "disabledReason",
            i.webhook_generation AS generation, i.revoked_at IS NOT NULL AS revoked
       FROM integrations i WHERE i.company_id = $1 AND i.id = $2`,
    [companyId, integrationId],
  );
  const target = rows[0];
  if (!target || target.revoked) return { refused: 'revoked', reason: 'the REST API integration was revoked' };
  if (target.url === null || target.secrets.length === 0) return { refused: 'no_address', reason: NO_WEBHOOK_ADDRESS };
  if (target.disabledReason !== '') return { refused: 'disabled', reason: target.disabledReason };
  return { url: target.url, secrets: target.secrets, generation: target.generation };
}
