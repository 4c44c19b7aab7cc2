import { performance } from 'node:perf_hooks';
import { ChangeFeed } from '../../db/change-feed.js';
import { NotifiedCache } from '../../db/notified-cache.js';
import type { Queryable } from '../../db/pool.js';
import { authenticate, hashKey, type KeyPrincipal } from './api-keys.js';

/** Finds the principal behind an API key; undefined for an unknown or revoked key. */
export interface KeyAuthenticator {
  /** `since`: when the request arrived (performance.now()); revocations committed before it count. */
  authenticate(key: string, since?: number): Promise<KeyPrincipal | undefined>;
  /**
   * The principal of a key this process holds as valid, at once: a revocation committed a moment ago
   * may not have been heard yet. Only for a request whose write finds its key at commit or writes
   * nothing (see requireApiKey); undefined when the key is not held as valid.
   */
  heldValid?(key: string): KeyPrincipal | undefined;
}

/** No cache: one database round trip per request (what the cache falls back to). */
export const databaseKeys = (db: Queryable): KeyAuthenticator => ({ authenticate: (key) => authenticate(db, key) });

/**
 * The channel on which a key's hash (hex) is notified whenever the key changes, goes
 * (db/migrations/3_api_key_revocation_notify.sql) or comes (11_api_key_insert_notify.sql). Its name in
 * the database is older than the insert trigger and stays, as running processes listen on it.
 */
const API_KEY_CHANNEL = 'api_key_revoked';

/** Past this age an entry is read again, and that read records last use (at most once a minute). */
const MAX_AGE_MS = 60_000;
/** Known keys, and unknown hashes, are each at most this many entries; the oldest of the kind goes first. */
const MAX_ENTRIES = 10_000;
/** The cache's groups (CacheEntries): known keys apart from unknown hashes, each with its own share. */
const KNOWN = 'known';
const UNKNOWN = 'unknown';

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
 * API keys cached in the process (key hash → principal), so a request costs no key lookup, while a
 * revoked or new key takes effect on the next request in every process: a NotifiedCache
 * (db/notified-cache.ts) on API_KEY_CHANNEL. Unknown keys are cached too, in a share of their own, so a
 * flood of them neither costs a lookup each nor evicts the keys of companies at work.
 */
export class ApiKeyCache implements KeyAuthenticator {
  readonly feed: ChangeFeed;
  private readonly ownsFeed: boolean;
  private readonly db: Queryable;
  private readonly cache: NotifiedCache<KeyPrincipal | undefined>;

  constructor({ db, feed, connectionString, waitMillis }: ApiKeyCacheOptions) {
    this.db = db;
    this.ownsFeed = feed === undefined;
    if (!feed && !connectionString) throw new Error('ApiKeyCache needs a feed or a connectionString');
    this.feed = feed ?? new ChangeFeed({ connectionString: connectionString!, waitMillis });
    this.cache = new NotifiedCache({
      feed: this.feed,
      channel: API_KEY_CHANNEL,
      // The payload is a key's hash; '*' (or nothing) means every key may have changed.
      changeOf: (hash) => (!hash || hash === '*' ? undefined : { scope: hash, keys: [hash] }),
      maxAgeMs: MAX_AGE_MS,
      budget: { total: 2 * MAX_ENTRIES, perGroup: MAX_ENTRIES },
    });
  }

  authenticate(key: string, since = performance.now()): Promise<KeyPrincipal | undefined> {
    const hash = hashKey(key).toString('hex');
    const lookup = {
      scope: hash,
      read: () => authenticate(this.db, key),
      keep: (value: KeyPrincipal | undefined) => ({ value, group: value ? KNOWN : UNKNOWN, size: 1 }),
    };
    return this.cache.get(hash, lookup, since);
  }

  heldValid(key: string): KeyPrincipal | undefined {
    return this.cache.unconfirmed(hashKey(key).toString('hex'));
  }

  /** Whether the cache can currently vouch for its entries (for tests and health). */
  get listening(): boolean {
    return this.cache.listening;
  }

  /** Resolves once the cache listens (or false after the timeout). */
  ready(timeoutMs = 5_000): Promise<boolean> {
    return this.feed.ready(timeoutMs);
  }

  async close(): Promise<void> {
    this.cache.close();
    if (this.ownsFeed) await this.feed.close();
  }
}
