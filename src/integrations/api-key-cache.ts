import { performance } from 'node:perf_hooks';
import { ChangeFeed, KEY_CHANNEL } from '../db/change-feed.js';
import type { Queryable } from '../db/pool.js';
import { authenticate, hashKey, type KeyPrincipal } from './api-keys.js';

/** Finds the principal behind an API key; undefined for an unknown or revoked key. */
export interface KeyAuthenticator {
  /** `since`: when the request arrived (performance.now()); revocations committed before it count. */
  authenticate(key: string, since?: number): Promise<KeyPrincipal | undefined>;
}

/** No cache: one database round trip per request (what the cache falls back to). */
export const databaseKeys = (db: Queryable): KeyAuthenticator => ({ authenticate: (key) => authenticate(db, key) });

/** Past this age an entry is read again, and that read records last use (at most once a minute). */
const MAX_AGE_MS = 60_000;
/** Each of the two maps (known keys, unknown hashes) holds at most this many; the oldest goes first. */
const MAX_ENTRIES = 10_000;

interface Entry<T> {
  value: T;
  expiresAt: number;
}
interface Lookup {
  hash: string;
  stale: boolean;
}

export interface ApiKeyCacheOptions {
  db: Queryable;
  /** The process's change feed; without one the cache opens its own (and closes it on close()). */
  feed?: ChangeFeed;
  /** For a feed of its own: the LISTEN connection's address (not taken from the pool: it is held for good). */
  connectionString?: string;
  /** For a feed of its own: how long opening it may wait on the database (DATABASE_CONNECT_TIMEOUT_MS). */
  waitMillis?: number;
}

/**
 * API keys cached in the process (key hash → principal), so a request costs no key lookup, while
 * a revoked key is still refused on the very next request by every process.
 *
 * Revocation deletes the key; a trigger notifies KEY_CHANNEL, delivered on commit through the
 * process's ChangeFeed. Before trusting an entry, a request waits for the feed's barrier, after which
 * every revocation that committed before the request arrived has been applied. Whenever the feed is
 * down, slow or reconnecting, the cache is emptied and requests ask the database directly (correct, one
 * round trip each) until it listens again.
 *
 * Unknown and revoked keys are cached too (their hashes only), so a flood of them costs no key lookup
 * per request. They live in a map of their own: a flood of distinct unknown keys evicts only other
 * unknown ones, never the keys of companies at work. Creating a key notifies its hash on the same
 * channel (db/migrations/11_api_key_insert_notify.sql), so the same barrier makes a key created before
 * a request arrived valid for it on every process, however recently its hash was cached as unknown.
 *
 * lastUsedAt: an entry lives at most a minute; the read that replaces it is the ordinary key query,
 * which records the use unless the stored one is under a minute old. A change of the key row
 * (including that write, or an operator's) is notified too and drops the entry.
 */
export class ApiKeyCache implements KeyAuthenticator {
  readonly feed: ChangeFeed;
  private readonly ownsFeed: boolean;
  private readonly db: Queryable;
  private readonly known = new Map<string, Entry<KeyPrincipal>>();
  private readonly unknown = new Map<string, Entry<undefined>>();
  /** Key reads in flight. One that a notification (or a lost feed) overtakes may have read a key
   * that is revoked (or created) by now, so its result is used for its request but not kept. */
  private readonly lookups = new Set<Lookup>();

  constructor({ db, feed, connectionString, waitMillis }: ApiKeyCacheOptions) {
    this.db = db;
    this.ownsFeed = feed === undefined;
    if (!feed && !connectionString) throw new Error('ApiKeyCache needs a feed or a connectionString');
    this.feed = feed ?? new ChangeFeed({ connectionString: connectionString!, waitMillis });
    this.feed.on(KEY_CHANNEL, (payload) => this.revoked(payload));
    this.feed.onReset(() => this.forgetAll());
  }

  async authenticate(key: string, since = performance.now()): Promise<KeyPrincipal | undefined> {
    const hash = hashKey(key).toString('hex');
    for (const entries of [this.known, this.unknown]) {
      const cached = entries.get(hash);
      if (!cached) continue;
      if (cached.expiresAt <= Date.now()) entries.delete(hash);
      // The barrier may just have delivered the key's revocation (or creation), which drops the entry.
      else if ((await this.feed.barrier(since)) && entries.get(hash) === cached) return cached.value;
      break;
    }
    const lookup: Lookup = { hash, stale: !this.feed.listening };
    this.lookups.add(lookup);
    try {
      const principal = await authenticate(this.db, key);
      if (!lookup.stale) {
        if (principal) remember(this.known, hash, principal, this.unknown);
        else remember(this.unknown, hash, undefined, this.known);
      }
      return principal;
    } finally {
      this.lookups.delete(lookup);
    }
  }

  /** Whether the cache can currently vouch for its entries (for tests and health). */
  get listening(): boolean {
    return this.feed.listening;
  }

  /** Resolves once the cache listens (or false after the timeout). */
  ready(timeoutMs = 5_000): Promise<boolean> {
    return this.feed.ready(timeoutMs);
  }

  async close(): Promise<void> {
    this.forgetAll();
    if (this.ownsFeed) await this.feed.close();
  }

  private revoked(payload: string): void {
    if (!payload || payload === '*') {
      this.forgetAll();
      return;
    }
    this.known.delete(payload);
    this.unknown.delete(payload);
    for (const lookup of this.lookups) if (lookup.hash === payload) lookup.stale = true;
  }

  private forgetAll(): void {
    this.known.clear();
    this.unknown.clear();
    for (const lookup of this.lookups) lookup.stale = true;
  }
}

/** Keeps what a lookup found in `entries`, and drops what `other` said of the same hash before. */
function remember<T>(entries: Map<string, Entry<T>>, hash: string, value: T, other: Map<string, unknown>): void {
  other.delete(hash);
  // Re-inserted, so that the map's order stays the order of expiry and the oldest goes first.
  entries.delete(hash);
  if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
  entries.set(hash, { value, expiresAt: Date.now() + MAX_AGE_MS });
}
