import { withTransaction, type Pool } from '../db/pool.js';
import type { Logger } from '../platform/observability/logger.js';
import { completeAttempt, startAttempt } from './deliveries.js';
import { settleAttempt, type RetryPolicy } from './event-outcomes.js';
import { failEvent } from './events.js';
import { eventTarget } from './settings.js';
import type { DeliveryAttempt, Notifier } from './notifier.js';
import { FailingAddresses } from './failing-addresses.js';

export interface DeliveryWorkerOptions {
  db: Pool;
  notifier: Notifier;
  policy: RetryPolicy;
  logger: Logger;
  /** How often to look for due events when none were found. */
  pollMs: number;
  /** Attempts this process makes at once, all companies together. */
  maxInFlight: number;
  /** Of those, attempts of one company at most, so that a dead receiver's backlog holds back only its own. */
  maxInFlightPerCompany: number;
}

/** Beyond the delivery's own limit and the wait for connections: the recording's statements. */
const LEASE_MARGIN_MS = 5_000;
/** While takes keep failing, a line says so at most this often: not one per poll. */
const FAILING_TAKES_LOG_MS = 60_000;

interface Due {
  companyId: string;
  id: string;
  reportId: string;
  payload: string;
}

/**
 * Makes the attempts of pending events that are due, in the background, in every process: each takes
 * a due event by setting its lease (one statement: two processes never take the same event while its
 * lease lives), makes the attempt holding no connection, then settles it (event-outcomes.ts). An
 * attempt cut short by a crash is made again once its lease has run out: at least once. The places
 * are the worker's own, apart from those of inspectors' publishes, which never wait behind it; each
 * company takes at most its share of them, and the due events are taken round by round across
 * companies, so one company's backlog never delays another's attempts. A company whose last attempt
 * failed is paced (FailingAddresses): its other due events wait, still due, instead of spending the
 * shared cores on a receiver that is down, and the companies failing now hold at most half of the
 * places together, so receivers that hang never keep the others' attempts waiting for a place.
 */
export class DeliveryWorker {
  private readonly inFlight = new Map<string, number>();
  private readonly failing: FailingAddresses;
  private readonly leased = new Map<string, Due>();
  private total = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private running: Promise<void> | undefined;
  private readonly settled = new Set<() => void>();
  private readonly leaseMs: number;
  /** Takes failed in a row, and when the last line about them was logged. */
  private takeFailures: { count: number; loggedAt: number } | undefined;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.failing = new FailingAddresses(options.pollMs);
    this.leaseMs =
      options.notifier.timeoutMs + 2 * (options.db.options.connectionTimeoutMillis ?? 5_000) + LEASE_MARGIN_MS;
  }

  start(): void {
    this.schedule(0);
  }

  /**
   * Takes no more events, waits up to `budgetMs` for the attempts in flight, then hands the events of
   * those still running back (their leases end now), so another process makes them without waiting.
   */
  async stop(budgetMs: number): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    if (this.total > 0) {
      await new Promise<void>((resolve) => {
        const done = () => resolve();
        this.settled.add(done);
        setTimeout(done, budgetMs).unref();
      });
    }
    const left = [...this.leased.values()];
    if (left.length === 0) return;
    await this.options.db
      .query(
        `UPDATE webhook_events SET leased_until = NULL
          WHERE (company_id, id) IN (SELECT * FROM unnest($1::uuid[], $2::text[])) AND status = 'pending'`,
        [left.map((e) => e.companyId), left.map((e) => e.id)],
      )
      .catch((err: unknown) => this.options.logger.warn({ err: String(err) }, 'events not handed back'));
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = this.poll().finally(() => (this.running = undefined));
    }, ms);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    const free = this.options.maxInFlight - this.total;
    let taken = 0;
    if (free > 0 && !this.stopped) {
      try {
        const due = await this.take(free);
        this.tookAgain();
        taken = due.length;
        for (const event of due) this.attempt(event);
      } catch (err) {
        this.tookNone(err);
      }
    }
    // A full batch says more are due: look again at once, when places free up.
    this.schedule(taken === free && taken > 0 ? 0 : this.options.pollMs);
  }

  /** A take failed: logged when takes start failing, then at most once in FAILING_TAKES_LOG_MS. */
  private tookNone(err: unknown): void {
    const failures = (this.takeFailures ??= { count: 0, loggedAt: -Infinity });
    failures.count++;
    if (Date.now() - failures.loggedAt < FAILING_TAKES_LOG_MS) return;
    failures.loggedAt = Date.now();
    this.options.logger.warn({ err: String(err), failures: failures.count }, 'due webhook events not taken');
  }

  private tookAgain(): void {
    if (!this.takeFailures) return;
    this.options.logger.info({ failures: this.takeFailures.count }, 'due webhook events taken again');
    this.takeFailures = undefined;
  }

  /**
   * Leases up to `free` due events, round by round across companies, each within its share of places;
   * the companies failing now come after the others and within their part of the places.
   * The companies with pending events are found by skipping from one to the next along the index
   * (migration 19), and each one's due events read in order only up to its share: a company's backlog
   * costs a take nothing but the events it takes. Due means by now(), the statement's start, which
   * bounds the index range (clock_timestamp() changes from row to row, so every pending row of a
   * company would be read to compare it).
   */
  private async take(free: number): Promise<Due[]> {
    const busy = this.failing.busy(this.inFlight, this.options.maxInFlightPerCompany);
    const failing = this.failing.room(this.inFlight, this.options.maxInFlight);
    const { rows } = await this.options.db.query<Due>(
      `WITH RECURSIVE companies AS (
         (SELECT company_id FROM webhook_events WHERE status = 'pending' ORDER BY company_id LIMIT 1)
         UNION ALL
         SELECT (SELECT e.company_id FROM webhook_events e
                  WHERE e.status = 'pending' AND e.company_id > c.company_id ORDER BY e.company_id LIMIT 1)
           FROM companies c WHERE c.company_id IS NOT NULL
       ), due AS (
         SELECT d.company_id, d.id, d.n, d.next_attempt_at, c.company_id = ANY($6::uuid[]) AS failing FROM companies c
          CROSS JOIN LATERAL (
            SELECT e.company_id, e.id, e.next_attempt_at,
                   row_number() OVER (ORDER BY e.next_attempt_at, e.feed_seq) AS n
              FROM webhook_events e
             WHERE e.company_id = c.company_id AND e.status = 'pending' AND e.next_attempt_at <= now()
               AND (e.leased_until IS NULL OR e.leased_until < clock_timestamp())
             ORDER BY e.next_attempt_at, e.feed_seq
             LIMIT greatest(0, $2 - coalesce((SELECT b.n FROM unnest($3::uuid[], $4::int[]) AS b(company_id, n)
                                              WHERE b.company_id = c.company_id), 0))
          ) d
       ), picked AS (
         -- A failing company has one event here at most (FailingAddresses.busy): k counts failing companies.
         SELECT r.company_id, r.id FROM (
           SELECT due.*, row_number() OVER (PARTITION BY failing ORDER BY n, next_attempt_at) AS k FROM due
         ) r
          WHERE NOT r.failing OR r.k <= $7
          ORDER BY r.failing, r.n, r.next_attempt_at
          LIMIT $1
       ), locked AS (
         -- Rows another transaction holds (a revocation cancelling them, a settlement) are left to a
         -- later take: the take never waits, so it is never part of a cycle of waits.
         SELECT e.company_id, e.id FROM webhook_events e JOIN picked p ON p.company_id = e.company_id AND p.id = e.id
            FOR UPDATE OF e SKIP LOCKED
       )
       UPDATE webhook_events e SET leased_until = clock_timestamp() + $5 * interval '1 millisecond'
         FROM locked p
        WHERE e.company_id = p.company_id AND e.id = p.id AND e.status = 'pending'
          AND (e.leased_until IS NULL OR e.leased_until < clock_timestamp())
       RETURNING e.company_id AS "companyId", e.id, e.report_id AS "reportId", e.payload`,
      [
        free,
        this.options.maxInFlightPerCompany,
        busy.map(([c]) => c),
        busy.map(([, n]) => n),
        this.leaseMs,
        failing.companies,
        failing.free,
      ],
    );
    return rows;
  }

  private attempt(event: Due): void {
    const key = `${event.companyId} ${event.id}`;
    this.leased.set(key, event);
    this.total++;
    this.inFlight.set(event.companyId, (this.inFlight.get(event.companyId) ?? 0) + 1);
    this.deliver(event)
      .catch((err: unknown) =>
        this.options.logger.warn({ err: String(err), eventId: event.id }, 'webhook event attempt not recorded'),
      )
      .finally(() => {
        this.leased.delete(key);
        this.total--;
        const left = this.inFlight.get(event.companyId)! - 1;
        if (left === 0) this.inFlight.delete(event.companyId);
        else this.inFlight.set(event.companyId, left);
        if (this.total === 0) for (const done of this.settled) done();
        // A place is free: events that are due may be waiting for it.
        if (!this.stopped && !this.running) this.schedule(0);
      });
  }

  /** One attempt: to the address and with the secrets in force now; the log row first, the outcome after. */
  private async deliver(event: Due): Promise<void> {
    const { db, notifier, policy } = this.options;
    const target = await eventTarget(db, event.companyId);
    if ('refused' in target) {
      await failEvent(db, event.companyId, event.id, `no attempt made: ${target.reason}`);
      return;
    }
    const deliveryId = await startAttempt(db, event.companyId, {
      reportId: event.reportId,
      webhookId: event.id,
      url: target.url,
    });
    const attempt: DeliveryAttempt = await notifier.deliver({
      url: target.url,
      secrets: target.secrets,
      webhookId: event.id,
      payload: event.payload,
    });
    await withTransaction(db, async (tx) => {
      await completeAttempt(tx, event.companyId, deliveryId, attempt);
      await settleAttempt(tx, event.companyId, event.id, attempt, policy);
    });
    this.failing.record(event.companyId, attempt.error === '');
  }
}
