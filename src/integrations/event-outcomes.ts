import type { Queryable } from '../db/pool.js';
import type { DeliveryAttempt } from './notifier.js';

/**
 * What an attempt of an event does to it and to the company's address: the one place that decides,
 * for the publish's own first attempt and for every attempt after it alike.
 * - 2xx: delivered; the address's run of failures ends.
 * - 410 Gone: the address is disabled at once.
 * - Anything else: the address has failed since the first failure of its current run; past
 *   `disableAfterMs` of failures it is disabled. Otherwise the event waits the schedule's next wait
 *   (±10% jitter; a 429 or 503's Retry-After, at most a day, when longer) and uses that step up; with
 *   no step left, or after an attempt asked for by hand (a redelivery), it has failed.
 * Disabling an address fails every pending event of the company, with the reason.
 */
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

const GONE = 'the receiver answered HTTP 410 Gone';

/** Disables the company's address and fails its pending events, saying why. */
export async function disableAddress(db: Queryable, companyId: string, reason: string): Promise<void> {
  await db.query(
    `UPDATE integrations SET webhook_disabled_reason = $2, webhook_failing_since = NULL
      WHERE company_id = $1 AND revoked_at IS NULL AND webhook_disabled_reason = ''`,
    [companyId, reason],
  );
  await db.query(
    `UPDATE webhook_events
        SET status = 'failed', next_attempt_at = NULL, leased_until = NULL, redelivery = false,
            last_error = 'the webhook address is disabled: ' || $2
      WHERE company_id = $1 AND status = 'pending'`,
    [companyId, reason],
  );
}

/** The columns every attempt sets: its count (the log's rows of the event), when, and the lease ended. */
const ATTEMPTED = `attempts = (SELECT count(*) FROM webhook_deliveries d WHERE d.company_id = $1 AND d.webhook_id = $2),
                   last_attempt_at = $3, leased_until = NULL, redelivery = false`;

/** Sets the event's status after an attempt, and when it is next due (waitMs from now; null: never). */
async function recordAttempt(
  db: Queryable,
  companyId: string,
  eventId: string,
  attempt: DeliveryAttempt,
  next: { status: 'delivered' | 'pending' | 'failed'; error: string; waitMs: number | null; failures: number },
): Promise<string | null> {
  const { rows } = await db.query<{ next: string | null }>(
    `UPDATE webhook_events
        SET status = $4, last_error = $5, failures = $7,
            next_attempt_at = CASE WHEN $6::bigint IS NULL THEN NULL
                                   ELSE clock_timestamp() + $6::bigint * interval '1 millisecond' END,
            ${ATTEMPTED}
      WHERE company_id = $1 AND id = $2
      RETURNING to_char(next_attempt_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS next`,
    [companyId, eventId, attempt.attemptedAt, next.status, next.error, next.waitMs, next.failures],
  );
  return rows[0]!.next;
}

/**
 * Adds a failed attempt to the address's run of failures (started now when there is none) and
 * answers why the address is to be disabled: a 410, or a run longer than disableAfterMs; or undefined.
 */
async function disablingReason(
  db: Queryable,
  companyId: string,
  attempt: DeliveryAttempt,
  policy: RetryPolicy,
): Promise<string | undefined> {
  if (attempt.httpStatus === 410) return GONE;
  const { rows } = await db.query<{ since: string; tooLong: boolean }>(
    `UPDATE integrations SET webhook_failing_since = coalesce(webhook_failing_since, $2)
      WHERE company_id = $1 AND revoked_at IS NULL
      RETURNING to_char(webhook_failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS since,
                clock_timestamp() - webhook_failing_since >= $3 * interval '1 millisecond' AS "tooLong"`,
    [companyId, attempt.attemptedAt, policy.disableAfterMs],
  );
  const run = rows[0];
  return run?.tooLong ? `every attempt has failed since ${run.since} (${attempt.error})` : undefined;
}

/**
 * Settles the event after an attempt whose log row is written, in the caller's transaction. An event
 * that is no longer pending (cancelled by a revocation meanwhile) keeps its status.
 */
export async function settleAttempt(
  db: Queryable,
  companyId: string,
  eventId: string,
  attempt: DeliveryAttempt,
  policy: RetryPolicy,
): Promise<Settled> {
  // The company's integration row first, then the event's: the order a revocation takes them in
  // (it cancels the company's pending events), so the two never wait on each other in a cycle.
  await db.query('SELECT FROM integrations WHERE company_id = $1 AND revoked_at IS NULL FOR UPDATE', [companyId]);
  const { rows } = await db.query<{ status: string; failures: number; redelivery: boolean; lastError: string }>(
    `SELECT status, failures, redelivery, last_error AS "lastError"
       FROM webhook_events WHERE company_id = $1 AND id = $2 FOR UPDATE`,
    [companyId, eventId],
  );
  const event = rows[0];
  if (!event || event.status !== 'pending') return { status: 'cancelled', error: event?.lastError ?? '' };
  const failures = event.failures + 1;
  const record = (status: 'delivered' | 'pending' | 'failed', error: string, waitMs: number | null = null) =>
    recordAttempt(db, companyId, eventId, attempt, { status, error, waitMs, failures });
  if (attempt.error === '') {
    await record('delivered', '');
    await db.query(
      'UPDATE integrations SET webhook_failing_since = NULL WHERE company_id = $1 AND revoked_at IS NULL',
      [companyId],
    );
    return { status: 'delivered' };
  }
  const disabling = await disablingReason(db, companyId, attempt, policy);
  if (disabling) {
    const error = `the webhook address is disabled: ${disabling}`;
    await record('failed', error);
    await disableAddress(db, companyId, disabling);
    return { status: 'failed', error };
  }
  if (event.redelivery || event.failures >= policy.schedule.length) {
    const error = event.redelivery
      ? attempt.error
      : `${attempt.error} (the last of ${policy.schedule.length + 1} attempts)`;
    await record('failed', error);
    return { status: 'failed', error };
  }
  const next = await record('pending', attempt.error, nextWait(policy, event.failures, attempt));
  return { status: 'pending', error: attempt.error, nextAttemptAt: next! };
}
