import type { Event, EventType, SecretRotation, WebhookSettings } from '../api-types.js';
import { conflict, notFound } from '../core/errors.js';
import { quoted } from '../core/quoted.js';
import type { Pool, Queryable } from '../db/pool.js';
import { revokeKey } from './api-keys.js';
import { findEvent, redeliverEvent, whyNotRedeliverable } from './events.js';
import { recoverEvents } from './event-batches.js';
import { keyNotFound } from './integration-error-wording.js';
import { findWebhookTarget, rotateSecret, setWebhook } from './settings.js';
import { newWebhookSecret } from './signing.js';
import { noWebhookAddress } from './test-delivery.js';

/**
 * The actions of Settings > Integrations > REST API that the application API and the console share:
 * each decides its refusals here, so both answer them alike.
 */

/** openapi.yaml's default of `overlapSeconds` (one day, as Stripe's roll); the validator does not fill defaults in. */
export const DEFAULT_SECRET_OVERLAP_SECONDS = 86_400;

/** Revokes one of the company's keys (live or test); 404 when it has no such key. */
export async function revokeCompanyKey(db: Queryable, companyId: string, keyId: string): Promise<void> {
  if (!(await revokeKey(db, companyId, keyId))) throw notFound(keyNotFound(keyId));
}

/** Sets the webhook address of `ownerId` (the company or its sandbox) with a new signing secret, and its event types when given. */
export const saveWebhook = (
  db: Queryable,
  ownerId: string,
  url: string,
  eventTypes?: readonly EventType[],
): Promise<WebhookSettings> => setWebhook(db, ownerId, url, newWebhookSecret(), eventTypes);

/** Rotates the signing secret of `ownerId`'s webhook; 409 while it has no address (`whose` names it). */
export async function rotateWebhookSecret(
  db: Queryable,
  ownerId: string,
  whose: string,
  overlapSeconds = DEFAULT_SECRET_OVERLAP_SECONDS,
): Promise<SecretRotation> {
  const rotated = await rotateSecret(db, ownerId, newWebhookSecret(), overlapSeconds);
  if (!rotated) throw noWebhookAddress(whose);
  return rotated;
}

export const eventNotFound = (id: string) => `event ${quoted(id)} not found`;

/** 409 while the company's events have nowhere to go: no address, or it is disabled. */
async function refuseWithoutAddress(db: Queryable, companyId: string, then: string): Promise<void> {
  const target = await findWebhookTarget(db, companyId);
  if (target && target.secrets.length > 0 && target.disabledReason === '') return;
  throw conflict(
    target?.disabledReason
      ? `the webhook address is disabled (${target.disabledReason}): set it again, then ${then}`
      : `no webhook address is set: set one, then ${then}`,
  );
}

/**
 * One attempt of the event now: 404 without it, 409 when its integration was revoked (it is never sent
 * again) or while there is no address to send it to.
 */
export async function redeliverCompanyEvent(db: Pool, companyId: string, eventId: string): Promise<Event> {
  if (!(await findEvent(db, companyId, eventId))) throw notFound(eventNotFound(eventId));
  const why = await whyNotRedeliverable(db, companyId, eventId);
  if (why) throw conflict(why);
  await refuseWithoutAddress(db, companyId, 'redeliver');
  return (await redeliverEvent(db, companyId, eventId))!;
}

/** One attempt now of every failed event created since `since`: how many; 409 while there is no address. */
export async function recoverFailedEvents(db: Pool, companyId: string, since: Date): Promise<number> {
  await refuseWithoutAddress(db, companyId, 'recover');
  return recoverEvents(db, companyId, since);
}
