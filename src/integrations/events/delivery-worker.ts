import { CompanyCounts } from '../../core/company-counts.js';
import type { Pool } from '../../db/pool.js';
import type { Logger } from '../../platform/observability/logger.js';
import { makeAttempt } from '../webhooks/deliveries.js';
import { settleAttempt, type RetryPolicy } from './event-life.js';
import { failEvent } from './events.js';
import { failDisabledEvents } from './event-batches.js';
import { eventTarget } from '../webhooks/settings.js';
import type { Notifier } from '../webhooks/notifier.js';
import { FailingAddresses } from '../webhooks/failing-addresses.js';
import { takeDueEvents, type Due } from './due-events.js';
import { webhookBody } from '../webhooks/event-types.js';

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

/**
 * Makes the attempts of due events in the background, in every process: each event is leased (two
 * processes never take the same one), attempted holding no connection, then settled (event-life.ts);
 * a crash's attempt is made again once its lease runs out. The worker has delivery slots of its own,
 * apart from publishes', taken round by round across companies within each company's share, and
 * failing companies are paced (FailingAddresses), so one company's backlog or dead receiver never
 * delays another's attempts.
 */
export class DeliveryWorker {
  private readonly inFlight = new CompanyCounts();
  private readonly failing: FailingAddresses;
  private readonly leased = new Map<string, Due>();
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
    if (this.inFlight.total > 0) {
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
        `UPDATE webhook_events
            SET lease = NULL, leased_until = NULL, redelivery = redelivery OR leased_redelivery, leased_redelivery = false
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
    const free = this.options.maxInFlight - this.inFlight.total;
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
    // A full batch says more are due: look again at once, when slots free up.
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

  /** Leases up to `free` due events (due-events.ts), each company within its share of slots. */
  private take(free: number): Promise<Due[]> {
    return takeDueEvents(this.options.db, {
      free,
      share: this.options.maxInFlightPerCompany,
      busy: this.failing.busy(this.inFlight, this.options.maxInFlightPerCompany),
      failing: this.failing.room(this.inFlight, this.options.maxInFlight),
      leaseMs: this.leaseMs,
    });
  }

  private attempt(event: Due): void {
    const key = `${event.companyId} ${event.id}`;
    this.leased.set(key, event);
    this.inFlight.add(event.companyId, 1);
    this.deliver(event, Date.now())
      .catch((err: unknown) =>
        this.options.logger.warn({ err: String(err), eventId: event.id }, 'webhook event attempt not recorded'),
      )
      .finally(() => {
        this.leased.delete(key);
        this.inFlight.remove(event.companyId, 1);
        if (this.inFlight.total === 0) for (const done of this.settled) done();
        // A slot is free: events that are due may be waiting for it.
        if (!this.stopped && !this.running) this.schedule(0);
      });
  }

  /**
   * One attempt: to the address and with the secrets of the event's integration in force now; the log row
   * first, the outcome after, settled only by this lease. The lease is renewed as the request starts when
   * the wait since the take (for pooled connections) used up half its margin: otherwise what is left of
   * it already outlasts the request, and the renewal would be a write per attempt for nothing.
   */
  private async deliver(event: Due, takenAt: number): Promise<void> {
    const { db, notifier, policy } = this.options;
    const target = await eventTarget(db, event.companyId, event.integrationId);
    if ('refused' in target) {
      const [status, error] =
        target.refused === 'revoked'
          ? (['cancelled', target.reason] as const)
          : (['failed', `no attempt made: ${target.reason}`] as const);
      await failEvent(db, event.companyId, event.id, event.lease, status, error);
      return;
    }
    const renew = Date.now() - takenAt > LEASE_MARGIN_MS / 2;
    const { url, secrets, generation } = target;
    const payload = webhookBody(event.type, event.payload);
    const plan = {
      message: { url, secrets, webhookId: event.id, type: event.type, payload },
      reportId: event.reportId,
      ...(renew && { lease: { token: event.lease, ms: this.leaseMs } }),
    };
    const held = { lease: event.lease, generation };
    const made = await makeAttempt(db, notifier, event.companyId, plan, (tx, attempt) =>
      settleAttempt(tx, event.companyId, event.id, { ...attempt, ...held }, policy),
    );
    if (!made) return;
    const { attempt, recorded: settled } = made;
    this.failing.record(event.companyId, attempt.error === '');
    // Those left when this fails (the database gone) fail as they are taken.
    if (settled?.disabled) await failDisabledEvents(db, event.companyId, settled.disabled).catch(() => undefined);
  }
}
