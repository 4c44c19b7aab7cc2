import { performance } from 'node:perf_hooks';
import { CacheEntries, type CacheBudget, type Placement } from './cache-entries.js';
import type { ChangeFeed } from './change-feed.js';

export type { CacheBudget, Placement } from './cache-entries.js';

/** What one notification makes untrue. */
export interface Change {
  /** Reads in flight in this scope are returned but not kept (they may have read what changed). */
  scope: string;
  /** The entries it drops. */
  keys?: readonly string[];
  /** Every entry kept with one of these tags goes too (a company's list pages). */
  tags?: readonly string[];
}

export interface NotifiedCacheOptions {
  /** The process's change feed: its notifications, its barrier, its resets. */
  feed: ChangeFeed;
  /** The component's channel, which the cache registers on the feed. */
  channel: string;
  /** What a notification's payload changed; undefined when it may be anything: everything is forgotten. */
  changeOf: (payload: string) => Change | undefined;
  /** Past this age an entry is read again, whatever was (or was not) notified. */
  maxAgeMs: number;
  budget: CacheBudget;
}

/** One read of the database: the scope its changes are notified in, the read, and where to keep it. */
export interface Lookup<T, V> {
  scope: string;
  read: () => Promise<T>;
  /** Where to keep what was read (called only when it may be kept); undefined: not kept. */
  keep: (value: T) => Placement<V> | undefined;
}

/** A read in flight: a change in its scope (or a lost feed) that overtakes it makes it stale. */
interface InFlight {
  scope: string;
  stale: boolean;
}

/**
 * Values read from the database, cached in the process, while a change committed by any process shows
 * on the very next request everywhere. The one protocol of every cache on the ChangeFeed (keys,
 * reports):
 *
 * - What a change makes untrue is notified on commit (a trigger's pg_notify) and dropped on delivery
 *   (`changeOf` says what a payload drops; one it cannot tell drops everything).
 * - The barrier: delivery is asynchronous, so before trusting an entry a request waits for the feed's
 *   barrier, after which every change committed before the request arrived (`since`) has been applied;
 *   the entry is served only if it is still there, the very one found before.
 * - A read that a change in its scope overtakes (delivered while it was in flight) may have read the
 *   old value: its result serves its own request but is not kept. One that started while the feed
 *   did not listen is not kept either.
 * - A request for a key whose read is in flight joins that read when, after its barrier, no change has
 *   overtaken it: a burst for a key not cached costs one read.
 * - Whenever the feed is lost, reconnecting, or frozen (a barrier not completed in time: the feed drops
 *   the connection), notifications may be missed: everything is forgotten, reads in flight are made
 *   stale, and every request reads the database until the feed listens again.
 * - Bounded by age (maxAgeMs) and by a budget shared fairly between groups (CacheEntries).
 */
export class NotifiedCache<V> {
  readonly feed: ChangeFeed;
  private readonly changeOf: (payload: string) => Change | undefined;
  private readonly maxAgeMs: number;
  private readonly entries: CacheEntries<V>;
  private readonly inFlight = new Set<InFlight>();
  /** The read in flight of each key, which a request for that key may join rather than read again. */
  private readonly reading = new Map<string, { inFlight: InFlight; value: Promise<unknown> }>();
  private readonly unsubscribe: (() => void)[];
  /** Closed: it hears no change any more, so it keeps nothing (reads still return, from the database). */
  private closed = false;

  constructor({ feed, channel, changeOf, maxAgeMs, budget }: NotifiedCacheOptions) {
    this.feed = feed;
    this.changeOf = changeOf;
    this.maxAgeMs = maxAgeMs;
    this.entries = new CacheEntries(budget);
    this.unsubscribe = [feed.on(channel, (payload) => this.changed(payload)), feed.onReset(() => this.forgetAll())];
  }

  /**
   * The value at key: from the cache when it holds a fresh entry and the barrier for `since` (when the
   * request arrived, performance.now()) confirms it, otherwise from the lookup's read, kept unless a
   * change overtook it. T is what `lookup.read` returns for this key (a key is always read the same way).
   */
  async get<T extends V | undefined>(key: string, lookup: Lookup<T, V>, since: number = performance.now()): Promise<T> {
    const found = (await this.cached(key, since)) ?? (await this.joined(key, since));
    return found ? (found.value as T) : this.read(key, lookup);
  }

  /**
   * The value of a fresh entry at key without waiting for the barrier: it may be one a change committed
   * a moment ago made untrue, not yet delivered. Only for a caller whose result the database confirms
   * anyway (a write whose statement checks the key it was sent with); undefined when nothing fresh is kept.
   */
  unconfirmed(key: string): V | undefined {
    const entry = this.entries.get(key);
    return entry && entry.expiresAt > Date.now() ? entry.value : undefined;
  }

  /** Whether the cache can vouch for its entries now (its feed listens). */
  get listening(): boolean {
    return this.feed.listening;
  }

  /** How much is held (for tests and metrics). */
  get held(): { entries: number; size: number } {
    return this.entries.held;
  }

  /** Forgets everything and hears the feed no more (the feed itself is its owner's to close). */
  close(): void {
    this.closed = true;
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
    this.forgetAll();
  }

  /** The entry's value if it is fresh and every change committed before `since` has been applied. */
  private async cached(key: string, since: number): Promise<{ value: V } | undefined> {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    if (!(await this.feed.barrier(since))) return undefined;
    // The barrier may just have delivered the entry's change, which dropped (or replaced) it.
    return this.entries.get(key) === entry ? { value: entry.value } : undefined;
  }

  /**
   * The result of the read of key in flight, when no change overtook it up to the barrier for `since`:
   * it read after every change committed before the request arrived, so a burst of requests for a key
   * not cached costs one read, not one connection each.
   */
  private async joined(key: string, since: number): Promise<{ value: unknown } | undefined> {
    const pending = this.reading.get(key);
    if (!pending || pending.inFlight.stale || !(await this.feed.barrier(since)) || pending.inFlight.stale) {
      return undefined;
    }
    return { value: await pending.value };
  }

  private async read<T>(key: string, { scope, read, keep }: Lookup<T, V>): Promise<T> {
    const inFlight: InFlight = { scope, stale: !this.feed.listening };
    this.inFlight.add(inFlight);
    const reading = { inFlight, value: read() };
    this.reading.set(key, reading);
    try {
      const value = await reading.value;
      if (!inFlight.stale && !this.closed) {
        const placement = keep(value);
        if (placement) this.entries.set(key, placement, Date.now() + this.maxAgeMs);
      }
      return value;
    } finally {
      this.inFlight.delete(inFlight);
      if (this.reading.get(key) === reading) this.reading.delete(key);
    }
  }

  private changed(payload: string): void {
    const change = this.changeOf(payload);
    if (!change) {
      this.forgetAll();
      return;
    }
    for (const key of change.keys ?? []) this.entries.delete(key);
    for (const tag of change.tags ?? []) this.entries.deleteTagged(tag);
    for (const inFlight of this.inFlight) if (inFlight.scope === change.scope) inFlight.stale = true;
  }

  private forgetAll(): void {
    this.entries.clear();
    for (const inFlight of this.inFlight) inFlight.stale = true;
  }
}
