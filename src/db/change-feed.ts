import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { connectionOptions } from './pool.js';
import { isReadOnlyTransaction } from './sqlstate.js';

const RECONNECT_MS = 1_000;
/**
 * A standby refuses LISTEN until it is promoted: asked again less often, so that its log is not filled
 * with the refusals. Meanwhile the caches ask the database, as whenever the feed does not listen.
 */
const READ_ONLY_RECONNECT_MS = 5_000;
/**
 * A barrier that takes longer means the listening connection is stuck (the database frozen, the
 * connection dropped): drop it and ask the database. An empty query gives the database no work, so a
 * live connection completes it far sooner, and a request that falls back waits at most the pool's wait plus this.
 */
const BARRIER_TIMEOUT_MS = 500;

export interface ChangeFeedOptions {
  /** For the feed's own LISTEN connection (not taken from the pool: it is held for good). */
  connectionString: string;
  /** How long opening the LISTEN connection may wait on the database (DATABASE_CONNECT_TIMEOUT_MS). */
  waitMillis?: number;
}

/**
 * One LISTEN connection on the channels the components register (`on`), for the caches of this process,
 * and the barrier that tells a request when it may trust a cache: an empty query sent after the request
 * arrived, which completes only after PostgreSQL has sent every notification committed before it. While
 * the connection is down, caches are reset (`onReset`) and barriers fail. The caches use it through NotifiedCache.
 */
export class ChangeFeed {
  private readonly connectionString: string;
  private readonly waitMillis: number;
  private readonly handlers = new Map<string, ((payload: string) => void)[]>();
  private readonly resetHandlers: (() => void)[] = [];
  /** The LISTEN connection, set only while it listens. */
  private listener: pg.Client | undefined;
  /** The connection being opened or listening; any other that fails is an old one, already replaced. */
  private current: pg.Client | undefined;
  /** The barrier not yet sent: requests arriving now may share it. */
  private queued: Promise<boolean> | undefined;
  private inFlight: Promise<boolean> = Promise.resolve(true);
  private inFlightSentAt = -Infinity;
  /** When the last channel was added to a listening connection: a barrier sent before proves nothing of it. */
  private listenedAt = -Infinity;
  /** When the last barrier that completed on the current listener was sent (performance.now()). */
  private confirmedSentAt = -Infinity;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor({ connectionString, waitMillis = 5_000 }: ChangeFeedOptions) {
    this.connectionString = connectionString;
    this.waitMillis = waitMillis;
    void this.connect();
  }

  /**
   * Calls handler with the payload of every notification on channel, until the returned function is
   * called. A channel seen for the first time is listened to from now on, on every connection.
   */
  on(channel: string, handler: (payload: string) => void): () => void {
    const known = this.handlers.has(channel);
    this.handlers.set(channel, [...(this.handlers.get(channel) ?? []), handler]);
    if (!known && this.listener) this.listenLate(this.listener, channel);
    return () =>
      this.handlers.set(
        channel,
        (this.handlers.get(channel) ?? []).filter((h) => h !== handler),
      );
  }

  /** Calls handler whenever notifications may have been missed (whatever was cached must go), until the returned function is called. */
  onReset(handler: () => void): () => void {
    this.resetHandlers.push(handler);
    return () => {
      const at = this.resetHandlers.indexOf(handler);
      if (at >= 0) this.resetHandlers.splice(at, 1);
    };
  }

  /** Whether the feed listens now (caches may keep what they read only while it does). */
  get listening(): boolean {
    return this.listener !== undefined;
  }

  /** Resolves once the feed listens (or false after the timeout). */
  async ready(timeoutMs = 5_000): Promise<boolean> {
    for (let waited = 0; !this.listener && waited < timeoutMs; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.listener !== undefined;
  }

  /**
   * True once every change committed before `since` (a performance.now() taken when the request had
   * arrived) has been delivered; false when the feed cannot tell (not listening, barrier failed).
   */
  barrier(since: number = performance.now()): Promise<boolean> {
    if (this.listener && this.confirmedSentAt >= since) return Promise.resolve(true);
    if (this.inFlightSentAt >= since) return this.inFlight;
    // The barrier in flight left before this request arrived: queue a new one behind it, shared by
    // everyone who arrives until it is sent.
    this.queued ??= this.inFlight.then(() => {
      this.queued = undefined;
      const listener = this.listener;
      if (!listener) return false;
      const sentAt = performance.now();
      this.inFlightSentAt = sentAt;
      this.inFlight = this.roundTrip(listener, sentAt);
      return this.inFlight;
    });
    return this.queued;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    const client = this.current;
    this.current = undefined;
    this.forget();
    await client?.end().catch(() => undefined);
  }

  /** A channel added while listening: barriers sent from now on come back after its LISTEN. */
  private listenLate(listener: pg.Client, channel: string): void {
    this.listenedAt = performance.now();
    this.confirmedSentAt = -Infinity;
    this.inFlightSentAt = -Infinity;
    listener.query(`LISTEN ${channel}`).catch(() => this.lost(listener));
  }

  private async roundTrip(listener: pg.Client, sentAt: number): Promise<boolean> {
    const ok = await withinBarrierWait(
      listener.query('').then(
        () => true,
        () => false,
      ),
    );
    // lost() closes the connection: the query left without a reply leaves it in no state to be used again.
    if (!ok) this.lost(listener);
    if (!ok || this.listener !== listener) return false;
    if (sentAt >= this.listenedAt) this.confirmedSentAt = Math.max(this.confirmedSentAt, sentAt);
    return true;
  }

  private forget(): void {
    this.listener = undefined;
    // A barrier sent on a connection before this one proves nothing about what this one delivers.
    this.confirmedSentAt = -Infinity;
    this.inFlightSentAt = -Infinity;
    for (const handler of this.resetHandlers) handler();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.connectionString,
      application_name: 'inspection-report-intake change feed',
      ...connectionOptions(this.waitMillis),
    });
    this.current = client;
    client.on('notification', ({ channel, payload }) => {
      for (const handler of this.handlers.get(channel) ?? []) handler(payload ?? '');
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      // A channel registered while a LISTEN was on its way is listened to before the feed says it listens.
      for (const heard = new Set<string>(); ;) {
        const missing = [...this.handlers.keys()].filter((channel) => !heard.has(channel));
        if (missing.length === 0) break;
        await client.query(missing.map((channel) => `LISTEN ${channel}`).join('; '));
        missing.forEach((channel) => heard.add(channel));
      }
    } catch (err) {
      this.lost(client, isReadOnlyTransaction(err) ? READ_ONLY_RECONNECT_MS : RECONNECT_MS);
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
  private lost(client: pg.Client, reconnectMs = RECONNECT_MS): void {
    client.removeAllListeners('end');
    client.end().catch(() => undefined);
    if (client !== this.current) return;
    this.current = undefined;
    this.forget();
    if (this.closed || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.connect();
    }, reconnectMs);
    this.reconnectTimer.unref();
  }
}

/**
 * The barrier's reply, or false once BARRIER_TIMEOUT_MS have passed. The verdict waits for one more turn
 * of the event loop: after a long synchronous task Node runs expired timers before it reads the sockets,
 * and a reply that arrived meanwhile is read in that turn.
 */
function withinBarrierWait(reply: Promise<boolean>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => setImmediate(() => resolve(false)), BARRIER_TIMEOUT_MS);
  });
  return Promise.race([reply, late]).finally(() => clearTimeout(timer));
}
