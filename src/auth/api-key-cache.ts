import pg from 'pg';
import { connectionOptions, type Queryable } from '../db/pool.js';
import { authenticate, hashKey, type KeyPrincipal } from '../store/api-keys.js';

/** Finds the principal behind an API key; undefined for an unknown or revoked key. */
export interface KeyAuthenticator {
  authenticate(key: string): Promise<KeyPrincipal | undefined>;
}

/** No cache: one database round trip per request (what the cache falls back to). */
export const databaseKeys = (db: Queryable): KeyAuthenticator => ({ authenticate: (key) => authenticate(db, key) });

/** The channel db/migrations/3_api_key_revocation_notify.sql notifies with the deleted key's hash (hex). */
export const REVOCATION_CHANNEL = 'api_key_revoked';
/** Past this age an entry is read again, and that read records last use (at most once a minute). */
const MAX_AGE_MS = 60_000;
const MAX_ENTRIES = 10_000;
const RECONNECT_MS = 1_000;
/**
 * A barrier that takes longer means the listening connection is stuck (the database frozen, the
 * connection dropped): drop it and ask the database. An empty query is answered in well under a
 * millisecond, and a request that falls back still answers within the pool's wait plus this.
 */
const BARRIER_TIMEOUT_MS = 500;

interface Entry {
  principal: KeyPrincipal;
  expiresAt: number;
}
interface Lookup {
  hash: string;
  stale: boolean;
}

export interface ApiKeyCacheOptions {
  db: Queryable;
  /** For the cache's own LISTEN connection (not taken from the pool: it is held for good). */
  connectionString: string;
  /** How long opening the LISTEN connection may wait on the database (DATABASE_CONNECT_TIMEOUT_MS). */
  waitMillis?: number;
}

/**
 * API keys cached in the process (key hash → principal), so a request costs no key lookup, while
 * a revoked key is still refused on the very next request by every process.
 *
 * Revocation deletes the key; a trigger notifies REVOCATION_CHANNEL, delivered on commit to a LISTEN
 * connection this cache holds. Delivery is asynchronous, so an entry alone proves nothing about a
 * revocation that committed a moment ago. Before trusting an entry, a request waits for a barrier: an
 * empty query on the LISTEN connection sent after the request arrived. The revoking transaction has
 * signalled the listening backend before its caller got the answer, and that backend sends pending
 * notifications before the barrier's ReadyForQuery, so when the barrier completes every revocation
 * that committed before the request arrived has been applied. Concurrent requests share one barrier
 * (one tiny round trip on one connection, no plan, no index), instead of a key query each.
 *
 * Whenever the LISTEN connection is down, slow or reconnecting, the cache is emptied and requests
 * ask the database directly (correct, one round trip each) until it listens again.
 *
 * lastUsedAt: an entry lives at most a minute; the read that replaces it is the ordinary key query,
 * which records the use unless the stored one is under a minute old. A change of the key row
 * (including that write, or an operator's) is notified too and drops the entry.
 */
export class ApiKeyCache implements KeyAuthenticator {
  private readonly db: Queryable;
  private readonly connectionString: string;
  private readonly waitMillis: number;
  private readonly entries = new Map<string, Entry>();
  /** The LISTEN connection, set only while it listens. */
  private listener: pg.Client | undefined;
  /** The connection being opened or listening; any other that fails is an old one, already replaced. */
  private current: pg.Client | undefined;
  /** Key reads in flight. One that a notification (or a lost listener) overtakes may have read a key
   * that is revoked by now, so its result is used for its request but not kept. */
  private readonly lookups = new Set<Lookup>();
  /** The barrier not yet sent: requests arriving now may share it. */
  private queued: Promise<boolean> | undefined;
  private inFlight: Promise<boolean> = Promise.resolve(true);
  private reconnectTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor({ db, connectionString, waitMillis = 5_000 }: ApiKeyCacheOptions) {
    this.db = db;
    this.connectionString = connectionString;
    this.waitMillis = waitMillis;
    void this.connect();
  }

  async authenticate(key: string): Promise<KeyPrincipal | undefined> {
    const hash = hashKey(key).toString('hex');
    const cached = this.entries.get(hash);
    if (cached && cached.expiresAt <= Date.now()) this.entries.delete(hash);
    else if (cached && (await this.barrier())) {
      const entry = this.entries.get(hash); // the barrier may just have delivered its revocation
      if (entry) return entry.principal;
    }
    const lookup: Lookup = { hash, stale: this.listener === undefined };
    this.lookups.add(lookup);
    try {
      const principal = await authenticate(this.db, key);
      if (principal && !lookup.stale) this.remember(hash, principal);
      return principal;
    } finally {
      this.lookups.delete(lookup);
    }
  }

  /** Whether the cache can currently vouch for its entries (for tests and health). */
  get listening(): boolean {
    return this.listener !== undefined;
  }

  /** Resolves once the cache listens (or false after the timeout). */
  async ready(timeoutMs = 5_000): Promise<boolean> {
    for (let waited = 0; !this.listener && waited < timeoutMs; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.listener !== undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    const client = this.current;
    this.current = undefined;
    this.forget();
    await client?.end().catch(() => undefined);
  }

  /** True once every revocation committed before this call has reached the cache. */
  private barrier(): Promise<boolean> {
    // A barrier already sent may have left before the revocation this request must see: queue a new
    // one behind it, shared by everyone who arrives until it is sent.
    this.queued ??= this.inFlight.then(() => {
      this.queued = undefined;
      const listener = this.listener;
      if (!listener) return false;
      this.inFlight = this.roundTrip(listener);
      return this.inFlight;
    });
    return this.queued;
  }

  private async roundTrip(listener: pg.Client): Promise<boolean> {
    // The connection's query_timeout (BARRIER_TIMEOUT_MS) fails a barrier that does not come back.
    const ok = await listener.query('').then(
      () => true,
      () => false,
    );
    // lost() closes the connection: the unanswered query leaves it in no state to be used again.
    if (!ok) this.lost(listener);
    return ok && this.listener === listener;
  }

  private remember(hash: string, principal: KeyPrincipal): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(hash, { principal, expiresAt: Date.now() + MAX_AGE_MS });
  }

  private revoked(payload: string | undefined): void {
    if (!payload || payload === '*') {
      this.forgetAll();
      return;
    }
    this.entries.delete(payload);
    for (const lookup of this.lookups) if (lookup.hash === payload) lookup.stale = true;
  }

  private forgetAll(): void {
    this.entries.clear();
    for (const lookup of this.lookups) lookup.stale = true;
  }

  private forget(): void {
    this.listener = undefined;
    this.forgetAll();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.connectionString,
      application_name: 'inspection-report-intake key cache',
      ...connectionOptions(this.waitMillis),
      query_timeout: BARRIER_TIMEOUT_MS,
    });
    this.current = client;
    client.on('notification', (message) => {
      if (message.channel === REVOCATION_CHANNEL) this.revoked(message.payload);
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${REVOCATION_CHANNEL}`);
    } catch {
      this.lost(client);
      return;
    }
    if (this.closed || this.current !== client) {
      await client.end().catch(() => undefined);
      return;
    }
    this.forget();
    this.listener = client;
  }

  /** The LISTEN connection failed: notifications may be missed, so nothing cached is trusted. */
  private lost(client: pg.Client): void {
    client.removeAllListeners('end');
    client.end().catch(() => undefined);
    if (client !== this.current) return;
    this.current = undefined;
    this.forget();
    if (this.closed || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.connect();
    }, RECONNECT_MS);
    this.reconnectTimer.unref();
  }
}
