import type { Queryable } from '../../db/pool.js';
import type { DeliveryAttempt } from './notifier.js';

/**
 * What attempts tell of a company's webhook address (its integration's row), as event-life.ts settles
 * them: a success ends its run of failures and any pause; a 410, or a run of failures longer than
 * WEBHOOK_DISABLE_AFTER, disables it; a 429 or 503's Retry-After pauses it.
 */

const GONE = 'the receiver answered HTTP 410 Gone';

/** What the settle needs of the integration's address. */
export interface AddressState {
  revoked: boolean;
  generation: number;
  disabledReason: string;
}

/**
 * The integration's address read again under its row's lock, for a failure: the run of failures, a pause
 * or a disable is then counted against the address as it is, and a change of address or a revocation
 * waits for it (or it for them). The lock is taken after the event's, as every transaction that holds both
 * does (a revocation holds the integration's alone; its events are cancelled after it commits).
 */
export async function lockAddress(db: Queryable, companyId: string, integrationId: string): Promise<AddressState> {
  const { rows } = await db.query<AddressState>(
    `SELECT revoked_at IS NOT NULL AS revoked, webhook_generation AS generation,
            webhook_disabled_reason AS "disabledReason"
       FROM integrations WHERE company_id = $1 AND id = $2 FOR NO KEY UPDATE`,
    [companyId, integrationId],
  );
  return rows[0]!;
}

/** A 2xx from the address of `generation`: its run of failures and any pause end (not a newer address's). */
export async function addressWorked(
  db: Queryable,
  companyId: string,
  integrationId: string,
  generation: number,
): Promise<void> {
  await db.query(
    `UPDATE integrations SET webhook_failing_since = NULL, webhook_last_failure_at = NULL, webhook_paused_until = NULL
      WHERE company_id = $1 AND id = $2 AND webhook_generation = $3
        -- Nothing to clear, nothing written: most successes follow successes.
        AND (webhook_failing_since IS NOT NULL OR webhook_last_failure_at IS NOT NULL OR webhook_paused_until IS NOT NULL)`,
    [companyId, integrationId, generation],
  );
}

/** Disables the address, saying why (its pending events are failed by the caller, after its commit). */
export async function disableAddress(db: Queryable, companyId: string, integrationId: string, reason: string) {
  await db.query(
    `UPDATE integrations SET webhook_disabled_reason = $3, webhook_failing_since = NULL
      WHERE company_id = $1 AND id = $2`,
    [companyId, integrationId, reason],
  );
}

/**
 * Adds a failed attempt to the address's run of failures and returns why the address is to be disabled:
 * a 410, or a run longer than disableAfterMs; or undefined. A run starts with a failure after a success,
 * or after nothing failed for twice the schedule's last wait: an address that is down and has events is
 * tried at least that often (the last wait with its jitter, an attempt held back by pacing), so a longer
 * quiet means it was idle, not down.
 */
export async function disablingReason(
  db: Queryable,
  companyId: string,
  integrationId: string,
  attempt: DeliveryAttempt,
  policy: { schedule: readonly number[]; disableAfterMs: number },
): Promise<string | undefined> {
  if (attempt.httpStatus === 410) return GONE;
  const { rows } = await db.query<{ since: string; tooLong: boolean }>(
    `UPDATE integrations
        SET webhook_failing_since =
              CASE WHEN webhook_failing_since IS NULL
                     OR webhook_last_failure_at < $3::timestamptz - $5 * interval '1 millisecond'
                   THEN $3 ELSE webhook_failing_since END,
            webhook_last_failure_at = greatest(webhook_last_failure_at, $3)
      WHERE company_id = $1 AND id = $2
      RETURNING to_char(webhook_failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS since,
                clock_timestamp() - webhook_failing_since >= $4 * interval '1 millisecond' AS "tooLong"`,
    [companyId, integrationId, attempt.attemptedAt, policy.disableAfterMs, 2 * (policy.schedule.at(-1) ?? 0)],
  );
  const run = rows[0];
  return run?.tooLong ? `every attempt has failed since ${run.since} (${attempt.error})` : undefined;
}

/** A receiver's Retry-After holds back every attempt to its address, not one event's. */
export async function pauseAddress(db: Queryable, companyId: string, integrationId: string, ms: number): Promise<void> {
  await db.query(
    `UPDATE integrations
        SET webhook_paused_until = greatest(webhook_paused_until, clock_timestamp() + $3 * interval '1 millisecond')
      WHERE company_id = $1 AND id = $2`,
    [companyId, integrationId, ms],
  );
}

/** A test delivery got a 2xx: the address works, so its run of failures ends (if it is still the same address). */
export async function endFailureRun(db: Queryable, companyId: string, generation: number): Promise<void> {
  await db.query(
    `UPDATE integrations SET webhook_failing_since = NULL, webhook_last_failure_at = NULL
      WHERE company_id = $1 AND revoked_at IS NULL AND webhook_generation = $2`,
    [companyId, generation],
  );
}
