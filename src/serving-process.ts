import type { Server } from 'node:http';
import type { Express } from 'express';
import { appDepsFor, changeFeedFor, poolFor } from './app-deps.js';
import { createApp, sweepExpiredSessions, warmUp, type AppDeps } from './app.js';
import type { Config } from './config.js';
import type { Pool } from './db/pool.js';
import { listen, stopServer } from './platform/http/listen.js';
import type { Logger } from './platform/observability/logger.js';
import type { ChangeFeed } from './db/change-feed.js';
import { ReportCache, sweepEvery } from './reports/index.js';
import { sweepAudit } from './audit/index.js';
import { ApiKeyCache, DeliveryWorker, placeEvents, sweepOldEvents } from './integrations/index.js';
import { EventLoopLoad } from './platform/limits/loop-load.js';
import type { RateLimiter } from './platform/limits/rate-limiter.js';

/**
 * The event loop's utilisation past which a company that moved more than its share of the bytes waits
 * for the loop (platform/limits/admission.ts): below it, another company's request seldom waits for the
 * loop long; near 1, every request waits at each of its steps. A quarter rather than a half: large
 * creates keep the loop busy in long steps, which another company's request meets at each of its own
 * (`npm run bench:fairness` measures how long the other company waits).
 */
const LOOP_BUSY = 0.25;
/** How often this process sweeps Idempotency-Keys past their 24 hours and sandbox reports past their 30 days. */
const SWEEP_MS = 10 * 60_000;

/** Every SWEEP_MS: console sessions past their expiry, and audit entries past AUDIT_RETENTION. */
function sweepConsoleAndAudit(db: Pool, auditRetentionMs: number): NodeJS.Timeout {
  const timer = setInterval(() => {
    void sweepExpiredSessions(db).catch(() => undefined);
    void sweepAudit(db, auditRetentionMs).catch(() => undefined);
  }, SWEEP_MS);
  return timer.unref();
}

/**
 * The webhook's deliveries in the background: the worker that attempts due events (with delivery slots
 * of its own, as many as publishes have; it starts once the process listens), the placing of events a
 * stopped process left unplaced in the feed, and the sweep of events past EVENT_RETENTION.
 */
function setUpWebhookDeliveries(config: Config, { db, logger, notifier, retryPolicy }: AppDeps) {
  const worker = new DeliveryWorker({
    db,
    notifier,
    policy: retryPolicy,
    logger,
    pollMs: config.webhookRetryPollMs,
    maxInFlight: config.webhookMaxInFlight,
    maxInFlightPerCompany: config.webhookMaxInFlightPerCompany,
  });
  const sweep = () => void sweepOldEvents(db, config.eventRetentionMs).catch(() => undefined);
  // Events whose recording process stopped before placing them in the feed are placed by any process.
  const place = () => void placeEvents(db).catch(() => undefined);
  const timers = [setInterval(sweep, config.eventSweepIntervalMs), setInterval(place, config.webhookRetryPollMs)];
  for (const timer of timers) timer.unref();
  const eventTimers = { stop: () => timers.forEach(clearInterval) };
  return { worker, eventTimers };
}

/** One process serving HTTP: where it listens, and how it stops. */
/** Not ready (/readyz 503) until built; not built is only slower: each operation's first request builds its own. */
function warmUpInBackground(app: Express, logger: Logger): void {
  void warmUp(app).then(
    () => logger.info('validators built'),
    (err: unknown) => logger.warn({ err: String(err) }, 'validators not built at start'),
  );
}

export interface ServingProcess {
  baseUrl: string;
  /** Graceful stop: refuse new connections, finish requests in flight, close the key cache and the pool. */
  stop(signal: string): Promise<void>;
}

/**
 * Wires this process to serve HTTP against a migrated database: the pool, the caches, the limits, the
 * webhook's deliveries, the app, the listening socket. The process that runs alone serves, and so does
 * each cluster worker (see cluster.ts); server.ts, the entry point, decides which.
 */
export async function startServingProcess(
  config: Config,
  databaseUrl: string,
  appToken: string,
  logger: Logger,
): Promise<ServingProcess> {
  const db = poolFor(config, databaseUrl);
  // Keys and reports cached in the process, changes announced across processes through LISTEN/NOTIFY
  // (see ChangeFeed).
  const feed = changeFeedFor(config, databaseUrl);
  const apiKeys = new ApiKeyCache({ db, feed });
  const reports = new ReportCache({ db, feed });
  const sweeper = sweepEvery(db, SWEEP_MS);
  const sessionSweeper = sweepConsoleAndAudit(db, config.auditRetentionMs);
  const loop = new EventLoopLoad(LOOP_BUSY);
  const deps = appDepsFor(config, { db, appToken, logger, apiKeys, reports, loop });
  const { worker, eventTimers } = setUpWebhookDeliveries(config, deps);
  const app = createApp(deps);
  const server = await listen(app, config.port, config.host);
  if (config.webhookWorker) worker.start();
  if (config.warmValidators) warmUpInBackground(app, logger);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const baseUrl = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  logger.info({ baseUrl }, 'listening');

  return {
    baseUrl,
    stop: (signal) => {
      sweeper.stop();
      eventTimers.stop();
      clearInterval(sessionSweeper);
      const { rateLimiter } = deps.limits;
      return stopServingProcess(signal, { config, logger, server, worker, rateLimiter, apiKeys, feed, db });
    },
  };
}

/** Graceful stop: refuse new connections, finish requests in flight, then close what startServingProcess opened. */
async function stopServingProcess(
  signal: string,
  {
    config,
    logger,
    server,
    worker,
    rateLimiter,
    apiKeys,
    feed,
    db,
  }: {
    config: Config;
    logger: Logger;
    server: Server;
    worker: DeliveryWorker;
    rateLimiter: RateLimiter | undefined;
    apiKeys: ApiKeyCache;
    feed: ChangeFeed;
    db: Pool;
  },
): Promise<void> {
  const drained = stopServer(server, config.shutdownTimeoutMs);
  // Background attempts finish within the same budget, or are handed back to the other processes.
  const handedBack = worker.stop(config.shutdownTimeoutMs);
  // Logged once the listening socket is closed: from here on new connections are refused.
  logger.info(
    { signal, timeoutMs: config.shutdownTimeoutMs },
    'shutting down: refusing new connections, finishing requests in flight',
  );
  if (!(await drained)) {
    logger.warn({ timeoutMs: config.shutdownTimeoutMs }, 'requests still running at SHUTDOWN_TIMEOUT_MS were cut off');
  }
  await handedBack;
  await rateLimiter?.close();
  await apiKeys.close();
  await feed.close();
  await db.end();
}
