import type { Queryable } from '../../db/pool.js';

/** The decision on one request, and what the RateLimit header fields tell the caller. */
export interface RateLimitDecision {
  allowed: boolean;
  /** Requests left in the current window after this one. */
  remaining: number;
  /** Seconds until the window ends and the budget is whole again (at least 1). */
  resetSeconds: number;
}

export interface RateLimiterOptions {
  /** Requests one key may make per minute. */
  perMinute: number;
  /** Where every process of the deployment adds up its counts (rate_limit_counts, migration 12). */
  db: Queryable;
  /** How often this process adds its counts to the shared ones and reads theirs back. */
  syncMillis?: number;
  /** The clock (tests move it). */
  now?: () => number;
}

const WINDOW_MS = 60_000;
/** Rows of windows this old are deleted (by whichever process syncs when a new minute starts). */
const KEEP_WINDOWS = 2;

interface Counter {
  companyId: string;
  window: number;
  /** Requests of the window known here: this process's, and the others' as of the last sync. */
  count: number;
  /** This process's requests not yet added to the shared count. */
  pending: number;
}

/**
 * Each API key's request budget: `perMinute` requests per clock minute. Decided in memory, so a request
 * costs no database round trip; every `syncMillis` the counts are shared through rate_limit_counts, so a
 * key may exceed its budget by at most what other processes admit for it within one sync.
 */
export class RateLimiter {
  readonly perMinute: number;
  private readonly db: Queryable;
  private readonly now: () => number;
  private readonly counters = new Map<string, Counter>();
  private readonly timer: NodeJS.Timeout;
  private syncing: Promise<void> | undefined;
  private cleanedWindow = -1;

  constructor({ perMinute, db, syncMillis = 1_000, now = Date.now }: RateLimiterOptions) {
    this.perMinute = perMinute;
    this.db = db;
    this.now = now;
    this.timer = setInterval(() => void this.sync(), syncMillis);
    this.timer.unref();
  }

  /** Counts a request of the key against its budget, unless the budget is spent. */
  consume(keyId: string, companyId: string): RateLimitDecision {
    const now = this.now();
    const window = Math.floor(now / WINDOW_MS);
    const resetSeconds = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
    let counter = this.counters.get(keyId);
    if (!counter || counter.window !== window) {
      counter = { companyId, window, count: 0, pending: 0 };
      this.counters.set(keyId, counter);
    }
    if (counter.count >= this.perMinute) return { allowed: false, remaining: 0, resetSeconds };
    counter.count++;
    counter.pending++;
    return { allowed: true, remaining: this.perMinute - counter.count, resetSeconds };
  }

  /** Adds this process's counts to the shared ones and reads back the totals (one statement; one sync at a time). */
  sync(): Promise<void> {
    return (this.syncing ??= this.exchange().finally(() => (this.syncing = undefined)));
  }

  /** Stops syncing after one last exchange of the counts. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.sync();
  }

  private async exchange(): Promise<void> {
    const window = Math.floor(this.now() / WINDOW_MS);
    for (const [keyId, counter] of this.counters) if (counter.window < window) this.counters.delete(keyId);
    // Every key used here this minute: what was counted is added, and every total read back.
    const sent = [...this.counters].map(([keyId, c]) => ({ keyId, c, n: c.pending }));
    if (sent.length > 0) await this.send(window, sent);
    if (this.cleanedWindow !== window) {
      this.cleanedWindow = window;
      await this.db
        .query('DELETE FROM rate_limit_counts WHERE window_minute < $1', [window - KEEP_WINDOWS])
        .catch(() => undefined);
    }
  }

  private async send(window: number, sent: { keyId: string; c: Counter; n: number }[]): Promise<void> {
    for (const { c, n } of sent) c.pending -= n;
    const rows = sent.map(({ keyId, c, n }) => ({ company_id: c.companyId, key_id: keyId, window_minute: window, n }));
    try {
      const { rows: totals } = await this.db.query<{ key_id: string; count: number }>(
        `WITH i AS (
           SELECT * FROM jsonb_to_recordset($1::jsonb) AS i(company_id uuid, key_id uuid, window_minute bigint, n integer)
         ), added AS (
           INSERT INTO rate_limit_counts AS t (company_id, key_id, window_minute, count)
           SELECT company_id, key_id, window_minute, n FROM i WHERE n > 0
           ON CONFLICT (company_id, key_id, window_minute) DO UPDATE SET count = t.count + EXCLUDED.count
           RETURNING key_id, count
         )
         SELECT key_id, count FROM added
         UNION ALL
         SELECT t.key_id, t.count FROM i JOIN rate_limit_counts t USING (company_id, key_id, window_minute) WHERE i.n = 0`,
        [JSON.stringify(rows)],
      );
      for (const { key_id: keyId, count } of totals) {
        const counter = this.counters.get(keyId);
        // The total includes what was sent; what was counted here since is added on top.
        if (counter && counter.window === window) counter.count = Math.max(counter.count, count + counter.pending);
      }
    } catch {
      // Counted again at the next sync; meanwhile this process decides on its own counts.
      for (const { c, n } of sent) if (c.window === window) c.pending += n;
    }
  }
}
