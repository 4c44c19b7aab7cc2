import type { CreatedKey, Event, EventType, IntegrationView, SecretRotation, WebhookSettings } from '../api-types.js';
import { refuse } from '../core/errors.js';
import { withTransaction, type Pool, type Queryable } from '../db/pool.js';
import { isoTimestamp } from '../db/iso-timestamp.js';
import { existingSandbox } from '../companies/index.js';
import { recordAudit, recordAudits, withAudit, modeActedIn, type AuditEntry, type Doer } from '../audit/index.js';
import { createKey, listKeys, revokeKey, type KeyMode } from './keys/api-keys.js';
import { findEvent, redeliverEvent, whyNotRedeliverable } from './events/events.js';
import { cancelRevokedEvents, recoverEvents } from './events/event-batches.js';
import { DEFAULT_EVENT_TYPES } from './webhooks/event-types.js';
import { eventNotFound, keyNotFound } from './integration-error-wording.js';
import { findWebhookTarget, NO_WEBHOOK_ADDRESS, rotateSecret, setWebhook } from './webhooks/settings.js';
import { newWebhookSecret } from './webhooks/signing.js';
import { noWebhookAddress } from './webhooks/test-delivery.js';

/**
 * The actions of Settings > Integrations > REST API that the application API and the console share:
 * each decides its refusals here, so both refuse alike.
 */

/** openapi.yaml's default of `overlapSeconds` (one day, as Stripe's roll); the validator does not fill defaults in. */
export const DEFAULT_SECRET_OVERLAP_SECONDS = 86_400;

/** Generates a key of the company (live, or its sandbox's: test), recorded in its audit trail. */
export const generateKey = (pool: Pool, companyId: string, mode: KeyMode, by: Doer): Promise<CreatedKey> =>
  withAudit(
    pool,
    by,
    (db) => createKey(db, companyId, mode),
    (key) => ({ action: 'key.generated', subject: key.prefix, details: { mode } }),
  );

/** Revokes one of the company's keys (live or test); 404 when it has no such key. */
export async function revokeCompanyKey(pool: Pool, companyId: string, keyId: string, by: Doer): Promise<void> {
  await withAudit(
    pool,
    by,
    async (db) => {
      const revoked = await revokeKey(db, companyId, keyId);
      if (!revoked) throw refuse.notFound(keyNotFound(keyId));
      return revoked;
    },
    ({ prefix, mode }) => ({ action: 'key.revoked', subject: prefix, details: { mode } }),
  );
}

/**
 * Sets the webhook address of `ownerId` (the company or its sandbox) with a new signing secret, and its
 * event types when given.
 */
export const saveWebhook = (
  pool: Pool,
  ownerId: string,
  url: string,
  eventTypes: readonly EventType[] | undefined,
  by: Doer,
): Promise<WebhookSettings> =>
  withAudit(
    pool,
    by,
    (db) => setWebhook(db, ownerId, url, newWebhookSecret(), eventTypes),
    (saved) => ({
      action: 'webhook.saved',
      subject: saved.url,
      details: { world: modeActedIn(ownerId, by), eventTypes: saved.eventTypes.join(', ') },
    }),
  );

/** Rotates the signing secret of `ownerId`'s webhook; 409 while it has no address (`whose` names it). */
export function rotateWebhookSecret(
  pool: Pool,
  ownerId: string,
  whose: string,
  overlapSeconds = DEFAULT_SECRET_OVERLAP_SECONDS,
  by: Doer,
): Promise<SecretRotation> {
  return withAudit(
    pool,
    by,
    async (db) => {
      const rotated = await rotateSecret(db, ownerId, newWebhookSecret(), overlapSeconds);
      if (!rotated) throw noWebhookAddress(whose);
      return rotated;
    },
    () => ({
      action: 'webhook.secret_rotated',
      details: { world: modeActedIn(ownerId, by), overlapSeconds: String(overlapSeconds) },
    }),
  );
}

/** The signing secret of `ownerId`'s webhook, shown on request (the console's "Reveal secret"): recorded. */
export const revealWebhookSecret = (pool: Pool, ownerId: string, by: Doer): Promise<string | null> =>
  withAudit(
    pool,
    by,
    async (db) => (await readIntegration(db, ownerId)).secret,
    () => ({ action: 'webhook.secret_revealed', details: { world: modeActedIn(ownerId, by) } }),
  );

/** 409 while the company's events have nowhere to go: no address, or it is disabled. */
async function refuseWithoutAddress(db: Queryable, companyId: string, then: string): Promise<void> {
  const target = await findWebhookTarget(db, companyId);
  if (target && target.secrets.length > 0 && target.disabledReason === '') return;
  throw refuse.conflict(
    target?.disabledReason
      ? `the webhook address is disabled (${target.disabledReason}): set it again, then ${then}`
      : `${NO_WEBHOOK_ADDRESS}: set one, then ${then}`,
  );
}

/**
 * One attempt of the event now: 404 without it, 409 when its integration was revoked (it is never sent
 * again) or while there is no address to send it to.
 */
export async function redeliverCompanyEvent(db: Pool, companyId: string, eventId: string, by: Doer): Promise<Event> {
  if (!(await findEvent(db, companyId, eventId))) throw refuse.notFound(eventNotFound(eventId));
  const why = await whyNotRedeliverable(db, companyId, eventId);
  if (why) throw refuse.conflict(why);
  await refuseWithoutAddress(db, companyId, 'redeliver');
  return withAudit(
    db,
    by,
    async (tx) => (await redeliverEvent(tx, companyId, eventId))!,
    () => ({ action: 'event.redelivered', subject: eventId, details: { world: modeActedIn(companyId, by) } }),
  );
}

/** One attempt now of every failed event created since `since`: how many; 409 while there is no address. */
export async function recoverFailedEvents(db: Pool, companyId: string, since: Date, by: Doer): Promise<number> {
  await refuseWithoutAddress(db, companyId, 'recover');
  // The events change in batches (event-batches.ts), each its own commit: the entry follows the last.
  const queued = await recoverEvents(db, companyId, since);
  await recordAudit(db, by, {
    action: 'events.recovered',
    details: { since: since.toISOString(), queued: String(queued) },
  });
  return queued;
}

/**
 * "Revoke REST API Integration": ends the active integration (its webhook address and secret go)
 * and deletes all of its keys, in one transaction. Reports keep pointing at the revoked integration,
 * which is how they know never to notify again. Nothing active is not an error.
 */
export async function revokeIntegration(pool: Pool, companyId: string, by: Doer): Promise<void> {
  const sandbox = await existingSandbox(pool, companyId);
  await withTransaction(pool, async (db) => {
    // Each key goes in the trail as revoked with it, so that the keys list keeps showing it.
    const revoked = (mode: KeyMode, prefixes: string[]): AuditEntry[] =>
      prefixes.map((prefix) => ({
        action: 'key.revoked',
        subject: prefix,
        details: { mode, with: 'the integration' },
      }));
    const live = revoked('live', await revokeIn(db, companyId));
    // The sandbox's integration too: its keys and its webhook address go with the company's.
    const test = sandbox ? revoked('test', await revokeIn(db, sandbox)) : [];
    await recordAudits(db, by, [{ action: 'integration.revoked' }, ...live, ...test]);
  });
  // Nothing of a revoked integration is sent again: its events are cancelled, in batches once the
  // revocation has committed, so that no number of them can roll it back.
  await cancelRevokedEvents(pool, companyId);
  if (sandbox) await cancelRevokedEvents(pool, sandbox);
}

/** Ends the company's (or its sandbox's) active integration; the prefixes of the keys it deleted. */
async function revokeIn(db: Queryable, companyId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `UPDATE integrations SET revoked_at = clock_timestamp(), webhook_url = NULL, webhook_secret = NULL,
            previous_webhook_secret = NULL, previous_secret_expires_at = NULL
      WHERE company_id = $1 AND revoked_at IS NULL RETURNING id`,
    [companyId],
  );
  if (!rows[0]) return [];
  // A separate statement, so it sees keys that a createKey holding the row lock committed meanwhile.
  const keys = await db.query<{ prefix: string }>(
    'DELETE FROM api_keys WHERE company_id = $1 AND integration_id = $2 RETURNING prefix',
    [companyId, rows[0].id],
  );
  return keys.rows.map((key) => key.prefix);
}

/** The company's active integration as Settings > Integrations > REST API shows it. */
export async function readIntegration(db: Queryable, companyId: string): Promise<IntegrationView> {
  const settings = await readIntegrationSettings(db, companyId);
  return { ...settings, keys: settings.active ? await listKeys(db, companyId) : [] };
}

/** readIntegration without the keys, which the console lists a page at a time (pageKeys). */
export async function readIntegrationSettings(
  db: Queryable,
  companyId: string,
): Promise<Omit<IntegrationView, 'keys'>> {
  const { rows } = await db.query<Omit<IntegrationView, 'active' | 'keys'>>(
    `SELECT webhook_url AS "webhookUrl", webhook_secret AS secret, event_types AS "eventTypes",
            CASE WHEN webhook_disabled_reason = '' THEN 'active' ELSE 'disabled' END AS "webhookStatus",
            webhook_disabled_reason AS "webhookDisabledReason",
            CASE WHEN previous_secret_expires_at > now()
                 THEN ${isoTimestamp('previous_secret_expires_at')} END AS "previousSecretExpiresAt"
       FROM integrations WHERE company_id = $1 AND revoked_at IS NULL`,
    [companyId],
  );
  const active = rows[0];
  return {
    active: active !== undefined,
    webhookUrl: active?.webhookUrl ?? null,
    secret: active?.secret ?? null,
    previousSecretExpiresAt: active?.previousSecretExpiresAt ?? null,
    webhookStatus: active?.webhookStatus ?? 'active',
    webhookDisabledReason: active?.webhookDisabledReason ?? '',
    eventTypes: active?.eventTypes ?? [...DEFAULT_EVENT_TYPES],
  };
}
