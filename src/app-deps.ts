// The app's dependencies built from the configuration, shared by serving-process.ts and the test
// harness so that each default lives in config.ts alone and a test app is wired like a server's.

import type { AppDeps } from './app.js';
import type { Config } from './config.js';
import { ChangeFeed } from './db/change-feed.js';
import { createPool, type Pool } from './db/pool.js';
import { createNotifier, type KeyAuthenticator, type Notifier, type RetryPolicy } from './integrations/index.js';
import { ReportWriter, type ReportReads } from './reports/index.js';
import { Admission } from './platform/limits/admission.js';
import type { LoopLoad } from './platform/limits/loop-load.js';
import type { PartnerLimits } from './platform/limits/partner-limits.js';
import { RateLimiter } from './platform/limits/rate-limiter.js';
import type { Logger } from './platform/observability/logger.js';

/** Requests of one company waiting for their turn in a process, at most, and for how long. */
const ADMISSION_MAX_WAITING = 256;
const ADMISSION_WAIT_MS = 2_000;

/** The process's pool of connections to the database at databaseUrl. */
export function poolFor(config: Config, databaseUrl: string): Pool {
  return createPool({
    connectionString: databaseUrl,
    max: config.databasePoolMax,
    connectionTimeoutMillis: config.databaseConnectTimeoutMs,
    statementTimeoutMillis: config.databaseStatementTimeoutMs,
    preparedStatements: config.databasePreparedStatements,
  });
}

/**
 * The process's change feed. LISTEN needs a session of its own, so it takes the direct connection, as
 * migrations do.
 */
export function changeFeedFor(config: Config, databaseUrl: string): ChangeFeed {
  return new ChangeFeed({
    connectionString: config.migrationDatabaseUrl ?? databaseUrl,
    waitMillis: config.databaseConnectTimeoutMs,
  });
}

/** Delivers the webhook; extra CAs for receivers come from Node's own NODE_EXTRA_CA_CERTS, read at process start. */
export function notifierFor(config: Config): Notifier {
  return createNotifier({
    allowedCidrs: config.webhookAllowedCidrs,
    timeoutMs: config.webhookTimeoutMs,
    maxInFlight: config.webhookMaxInFlight,
    maxInFlightPerCompany: config.webhookMaxInFlightPerCompany,
  });
}

export function retryPolicyFor(config: Config): RetryPolicy {
  return { schedule: config.webhookRetrySchedule, disableAfterMs: config.webhookDisableAfterMs };
}

/**
 * Each key's request budget (across processes, through the database) and each company's share of the
 * process; `loop` is the process's event loop load (absent: never busy).
 */
export function partnerLimitsFor(config: Config, db: Pool, loop?: LoopLoad): PartnerLimits {
  const rateLimiter =
    config.rateLimitPerMinute > 0 ? new RateLimiter({ perMinute: config.rateLimitPerMinute, db }) : undefined;
  const admission = new Admission({
    perCompany: config.companyMaxInFlight,
    perCompanyAlone: config.companyMaxInFlightAlone,
    companyBytes: config.companyBytesInFlight,
    processBytes: config.bytesInFlight,
    maxWaiting: ADMISSION_MAX_WAITING,
    waitMillis: ADMISSION_WAIT_MS,
    loop,
  });
  return { admission, rateLimiter };
}

/** What the caller opens and closes itself: the pool, the caches on its change feed, the loop's load. */
export interface Wiring {
  db: Pool;
  appToken: string;
  logger: Logger;
  apiKeys: KeyAuthenticator;
  reports: ReportReads;
  /**
   * The serving process measures its event loop; test apps leave it out, for many apps and their
   * clients share one loop there and its load says nothing of any one app.
   */
  loop?: LoopLoad;
}

/** Everything createApp needs, from the configuration and the wiring. */
export function appDepsFor(config: Config, { db, appToken, logger, apiKeys, reports, loop }: Wiring): AppDeps {
  return {
    db,
    logger,
    validateResponses: config.validateResponses,
    appToken,
    notifier: notifierFor(config),
    retryPolicy: retryPolicyFor(config),
    apiKeys,
    reports,
    writes: new ReportWriter(db),
    publicBaseUrl: config.publicBaseUrl,
    trustProxy: config.trustProxy,
    limits: partnerLimitsFor(config, db, loop),
  };
}
