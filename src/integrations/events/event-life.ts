import type { Queryable } from '../../db/pool.js';
import type { DeliveryAttempt } from '../webhooks/notifier.js';
import {
  addressWorked,
  disableAddress,
  disablingReason,
  lockAddress,
  pauseAddress,
  type AddressState,
} from '../webhooks/address-health.js';

/**
 * An event's life, rule by rule, and where each rule is decided. An event is:
 * - recorded in the commit of what it tells of, when report-events.ts whyNoEvent finds it due (a publish:
 *   publish.ts and publish-without-attempt.ts; a start: start.ts), for the integration that created the
 *   report, for good: it is never sent to another;
 * - in the feed once that commit is over, at the next position (feed-positions.ts);
 * - due while pending and past next_attempt_at, its address not paused; taken under a lease, companies
 *   in turns, those failing now within half the slots (due-events.ts, failing-addresses.ts);
 * - attempted to its integration's address with the secrets in force (settings.ts eventTarget) by the one
 *   way an attempt is made (deliveries.ts makeAttempt, its lease renewed as the request starts), for a
 *   publish or by the worker (delivery-worker.ts);
 * - settled by that attempt's outcome, here (settleAttempt);
 * - redelivered on request, after an attempt in flight, a pending one keeping its schedule, never for a
 *   revoked integration (events.ts redeliverEvent, integration-actions.ts);
 * - cancelled with its integration, failed with its disabled address, recovered, in bounded batches once
 *   the change has committed (event-batches.ts);
 * - swept past EVENT_RETENTION, never while pending nor while it is the company's last in the feed
 *   (event-batches.ts sweepOldEvents).
 *
 * What an attempt's outcome does to its event and to the address (address-health.ts keeps the address's):
 * - 2xx: delivered; the address's run of failures and any pause end.
 * - 410 Gone: the address is disabled at once.
 * - Anything else: the address has failed since the first failure of its current run; past
 *   `disableAfterMs` of failures it is disabled. Otherwise the event waits the schedule's next wait
 *   (±10% jitter; a 429 or 503's Retry-After, at most a day, when longer, which also pauses the address)
 *   and uses that step up; with no step left it has failed. A redelivery that fails resumes what was
 *   left of the schedule, or fails an event that had none.
 */

/** WEBHOOK_RETRY_SCHEDULE and WEBHOOK_DISABLE_AFTER. */
export interface RetryPolicy {
  /** The waits after each failed attempt, in milliseconds. */
  schedule: readonly number[];
  /** An address failing without a break this long is disabled. */
  disableAfterMs: number;
}

/** How an attempt left its event. */
export type Settled =
  | { status: 'delivered' }
  | { status: 'pending'; error: string; nextAttemptAt: string }
  | { status: 'failed' | 'cancelled'; error: string };

/** The longest a receiver's Retry-After may push an attempt back. */
const MAX_RETRY_AFTER_MS = 86_400_000;
/** Each wait of the schedule varies by this share either way, so that events failed together spread out. */
const JITTER = 0.1;

/** The wait after failure number `step` (from 0), with jitter and the receiver's Retry-After. */
export function nextWait(policy: RetryPolicy, step: number, attempt: Pick<DeliveryAttempt, 'retryAfterMs'>): number {
  const planned = policy.schedule[step]! * (1 - JITTER + 2 * JITTER * Math.random());
  return Math.round(Math.max(planned, Math.min(attempt.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS)));
}

/** The attempt being settled: the lease it holds on its event, and the address generation it was sent to. */
export type HeldAttempt = { lease: string; generation: number };

/** The columns every attempt sets: its count (the log's rows of the event), when, and the lease ended. */
const ATTEMPTED = `attempts = (SELECT count(*) FROM webhook_deliveries d WHERE d.company_id = $1 AND d.webhook_id = $2),
                   last_attempt_at = $3, lease = NULL, leased_until = NULL, leased_redelivery = false`;

interface NextState {
  status: 'delivered' | 'pending' | 'failed' | 'cancelled';
  error: string;
  /** From now, when the event is next due; null: never (not pending). */
  waitMs: number | null;
  failures: number;
  /** A redelivered pending event: in how long its schedule resumes should the redelivery fail. */
  resumeInMs?: number | null;
  /** One more attempt is asked for by hand (due at once). */
  redelivery?: boolean;
}

/** Sets the event's state after an attempt; returns when it is next due (pending only). */
async function recordAttempt(
  db: Queryable,
  companyId: string,
  eventId: string,
  attempt: DeliveryAttempt,
  next: NextState,
): Promise<string | null> {
  const { rows } = await db.query<{ next: string | null }>(
    `UPDATE webhook_events
        SET status = $4, last_error = $5, failures = $7, redelivery = $9,
            resume_at = clock_timestamp() + $8::bigint * interval '1 millisecond',
            next_attempt_at = CASE WHEN $6::bigint IS NULL THEN NULL
                                   ELSE clock_timestamp() + $6::bigint * interval '1 millisecond' END,
            ${ATTEMPTED}
      WHERE company_id = $1 AND id = $2
      RETURNING to_char(next_attempt_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS next`,
    [
      companyId,
      eventId,
      attempt.attemptedAt,
      next.status,
      next.error,
      next.waitMs,
      next.failures,
      next.resumeInMs ?? null,
      next.redelivery ?? false,
    ],
  );
  return rows[0]!.next;
}

/** The event as the settle finds it (locked), and its integration's address. */
interface Found extends AddressState {
  failures: number;
  lease: string | null;
  leasedRedelivery: boolean;
  /** A redelivery asked for while this attempt was in flight. */
  redelivery: boolean;
  /** How long until resume_at (0 when past). */
  resumeInMs: number | null;
  integrationId: string;
  /** The address has a run of failures or a pause for a success to end (most successes follow successes). */
  hasFailures: boolean;
}

/** The state a failed attempt leaves its event in, the address still enabled. */
function afterFailure(event: Found, attempt: DeliveryAttempt, policy: RetryPolicy): NextState {
  const failures = event.failures;
  if (event.leasedRedelivery && event.resumeInMs !== null)
    // A redelivery of an event still on its schedule: the schedule goes on where it was.
    return { status: 'pending', error: attempt.error, waitMs: event.resumeInMs, failures };
  if (event.leasedRedelivery) return { status: 'failed', error: attempt.error, waitMs: null, failures };
  if (failures >= policy.schedule.length)
    return {
      status: 'failed',
      error: `${attempt.error} (the last of ${policy.schedule.length + 1} attempts)`,
      waitMs: null,
      failures: failures + 1,
    };
  return {
    status: 'pending',
    error: attempt.error,
    waitMs: nextWait(policy, failures, attempt),
    failures: failures + 1,
  };
}

/** How an attempt left its event; `disabled`: this attempt disabled the address (its other events are to fail). */
export type SettledAttempt = Settled & { disabled?: string };

/**
 * Settles the event after an attempt whose log row is written, in the caller's transaction:
 * - only the attempt holding the event's lease settles it (one that outlived its lease is logged, no more),
 *   a publish's first attempt its `sending` event too;
 * - its integration revoked meanwhile: a 2xx is delivered, anything else cancelled;
 * - its address changed meanwhile: the outcome was the old address's, so the event is due again at once;
 * - then 2xx, 410, Retry-After, the schedule and the run of failures as above, an address disabled
 *   meanwhile (another event's 410) failing it;
 * - a redelivery asked for during the attempt is due at once afterwards, whatever the outcome.
 * Undefined when the attempt no longer holds its event.
 */
export async function settleAttempt(
  db: Queryable,
  companyId: string,
  eventId: string,
  attempt: DeliveryAttempt & HeldAttempt,
  policy: RetryPolicy,
): Promise<SettledAttempt | undefined> {
  // The event's row is locked; its integration's is read unlocked (a success changes it only when there
  // is something to clear, conditionally), and locked by decide() only when a failure counts against it.
  const { rows } = await db.query<Found>(
    `SELECT e.failures, e.lease, e.leased_redelivery AS "leasedRedelivery", e.redelivery,
            CASE WHEN e.resume_at IS NOT NULL
                 THEN greatest(0, (extract(epoch FROM e.resume_at - clock_timestamp()) * 1000)::int) END AS "resumeInMs",
            i.id AS "integrationId", i.revoked_at IS NOT NULL AS revoked, i.webhook_generation AS generation,
            i.webhook_disabled_reason AS "disabledReason",
            (i.webhook_failing_since IS NOT NULL OR i.webhook_last_failure_at IS NOT NULL
             OR i.webhook_paused_until IS NOT NULL) AS "hasFailures"
       FROM webhook_events e JOIN integrations i ON i.company_id = e.company_id AND i.id = e.integration_id
      WHERE e.company_id = $1 AND e.id = $2 AND e.status IN ('pending', 'sending') FOR UPDATE OF e`,
    [companyId, eventId],
  );
  const event = rows[0];
  if (!event || event.lease !== attempt.lease) return undefined;
  const next = await decide(db, companyId, event, attempt, policy);
  const redeliverAfter = event.redelivery && next.status !== 'cancelled';
  const nextAt = await recordAttempt(db, companyId, eventId, attempt, {
    ...next,
    // The redelivery asked for meanwhile comes next; the schedule, if any is left, resumes after it.
    ...(redeliverAfter && {
      redelivery: true,
      waitMs: 0,
      resumeInMs: next.status === 'pending' ? next.waitMs : null,
      status: 'pending',
    }),
  });
  if (next.status === 'pending' || redeliverAfter)
    return { status: 'pending', error: next.error, nextAttemptAt: nextAt!, disabled: next.disabled };
  return next.status === 'delivered'
    ? { status: 'delivered' }
    : { status: next.status, error: next.error, disabled: next.disabled };
}

/** The state the attempt leaves its event in (before a redelivery asked meanwhile). */
async function decide(
  db: Queryable,
  companyId: string,
  event: Found,
  attempt: DeliveryAttempt & HeldAttempt,
  policy: RetryPolicy,
): Promise<NextState & { disabled?: string }> {
  const { failures, integrationId } = event;
  const delivered = attempt.error === '';
  const address = delivered ? event : await lockAddress(db, companyId, integrationId);
  if (address.revoked)
    return delivered
      ? { status: 'delivered', error: '', waitMs: null, failures }
      : { status: 'cancelled', error: REVOKED, waitMs: null, failures };
  if (address.generation !== attempt.generation)
    return { status: 'pending', error: 'the webhook address changed during the attempt', waitMs: 0, failures };
  if (delivered) {
    if (event.hasFailures) await addressWorked(db, companyId, integrationId, attempt.generation);
    return { status: 'delivered', error: '', waitMs: null, failures };
  }
  if (address.disabledReason !== '')
    return {
      status: 'failed',
      error: `the webhook address is disabled: ${address.disabledReason}`,
      waitMs: null,
      failures,
    };
  const disabling = await disablingReason(db, companyId, integrationId, attempt, policy);
  if (disabling) {
    await disableAddress(db, companyId, integrationId, disabling);
    const error = `the webhook address is disabled: ${disabling}`;
    return { status: 'failed', error, waitMs: null, failures: failures + 1, disabled: disabling };
  }
  if (attempt.retryAfterMs !== undefined)
    await pauseAddress(db, companyId, integrationId, Math.min(attempt.retryAfterMs, MAX_RETRY_AFTER_MS));
  return afterFailure(event, attempt, policy);
}

/** Why an event of a revoked integration is cancelled. */
export const REVOKED = 'the REST API integration was revoked';
