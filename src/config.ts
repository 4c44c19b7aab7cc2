import { statementTimeoutFor } from './db/pool.js';
import {
  boolean,
  cidrList,
  concurrency,
  ConfigError,
  duration,
  integer,
  postgresUrl,
  publicBaseUrl,
  schedule,
} from './config-values.js';

export { ConfigError };

/** Configuration, parsed and checked once from an environment: by server.ts, the scripts and the test harness. */
export interface Config {
  readonly port: number;
  readonly host: string;
  /** Absent: the service runs on its embedded PostgreSQL under `.data/`. */
  readonly databaseUrl: string | undefined;
  /** Required with DATABASE_URL; generated and kept under `.data/` with the embedded default. */
  readonly appToken: string | undefined;
  readonly logLevel: string;
  /** Direct connection for migrations (their advisory lock needs a session; PgBouncer's transaction mode has none). */
  readonly migrationDatabaseUrl: string | undefined;
  /** Connections each process keeps to PostgreSQL at most. */
  readonly databasePoolMax: number;
  /** How long a request waits on the database, for a connection and for each query's result, before it fails with 503. */
  readonly databaseConnectTimeoutMs: number;
  /** Server-side limit per SQL statement, below the wait; 0 sends none (set it on the role instead behind PgBouncer). */
  readonly databaseStatementTimeoutMs: number;
  /** false: statements are sent unnamed (PgBouncer before 1.21 in transaction mode cannot keep named ones). */
  readonly databasePreparedStatements: boolean;
  /** HTTP worker processes behind the one port (node:cluster); 1 serves in this process. */
  readonly webConcurrency: number;
  /** How long SIGTERM/SIGINT wait for requests in flight before cutting them off. */
  readonly shutdownTimeoutMs: number;
  /** Validate every response against openapi.yaml (on in tests and by default). */
  readonly validateResponses: boolean;
  /** Build every operation's validators once listening (/readyz 503 meanwhile), not at its first request (off by default). */
  readonly warmValidators: boolean;
  /** Networks webhook receivers may be in despite the SSRF guard (local testing only); empty by default. */
  readonly webhookAllowedCidrs: readonly string[];
  /** Overall time a webhook delivery may take, in milliseconds. */
  readonly webhookTimeoutMs: number;
  /** Webhook deliveries this process runs at once at most; past it publishing responds 503 with Retry-After. */
  readonly webhookMaxInFlight: number;
  /** Of those, deliveries of one company at most (≤ webhookMaxInFlight), so a slow receiver blocks only its own. */
  readonly webhookMaxInFlightPerCompany: number;
  /** The waits after each failed attempt of an event, in milliseconds (WEBHOOK_RETRY_SCHEDULE); then it has failed. */
  readonly webhookRetrySchedule: readonly number[];
  /** An address failing without a break this long is disabled, in milliseconds (WEBHOOK_DISABLE_AFTER). */
  readonly webhookDisableAfterMs: number;
  /** How often a process looks for due events, in milliseconds (WEBHOOK_RETRY_POLL_MS). */
  readonly webhookRetryPollMs: number;
  /** Whether this process makes background attempts (WEBHOOK_WORKER): off where other processes make them. */
  readonly webhookWorker: boolean;
  /** How long events are kept, in milliseconds (EVENT_RETENTION). */
  readonly eventRetentionMs: number;
  /** How long the audit trail's entries are kept, in milliseconds (AUDIT_RETENTION). */
  readonly auditRetentionMs: number;
  /** How often a process sweeps events past their retention, in milliseconds (EVENT_SWEEP_INTERVAL). */
  readonly eventSweepIntervalMs: number;
  /** The address partners reach the service at, named in the published documents' `servers`; no trailing slash. */
  readonly publicBaseUrl: string | undefined;
  /** Take the client's protocol and host from X-Forwarded-Proto/Host (only behind a proxy that sets them). */
  readonly trustProxy: boolean;
  /** Requests each API key may make per minute, across the deployment; 0: no limit. */
  readonly rateLimitPerMinute: number;
  /** Partner requests of one company this process handles at once while other companies are at work; the rest wait their turn. */
  readonly companyMaxInFlight: number;
  /** The same while the company is the only one at work (capacity nobody else asks for is lent). */
  readonly companyMaxInFlightAlone: number;
  /** Bytes one company's requests may move in this process at once: their bodies and their expected responses. */
  readonly companyBytesInFlight: number;
  /** The same for this process, all companies together. */
  readonly bytesInFlight: number;
}

const MIB = 1024 * 1024;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** The database's settings: where it is, the application token that comes with it, the pool and its waits. */
function databaseConfig(env: NodeJS.ProcessEnv) {
  const databaseUrl = postgresUrl(env, 'DATABASE_URL');
  const migrationDatabaseUrl = postgresUrl(env, 'DATABASE_MIGRATION_URL');
  if (migrationDatabaseUrl !== undefined && databaseUrl === undefined) {
    throw new ConfigError('DATABASE_MIGRATION_URL is only used together with DATABASE_URL');
  }
  const appToken = env.APP_TOKEN || undefined;
  if (databaseUrl !== undefined && appToken === undefined) {
    throw new ConfigError('APP_TOKEN is required when DATABASE_URL is set (a random string of at least 32 characters)');
  }
  if (appToken !== undefined && appToken.length < 32) {
    throw new ConfigError('APP_TOKEN must be at least 32 characters long');
  }
  const databaseConnectTimeoutMs = integer(env, 'DATABASE_CONNECT_TIMEOUT_MS', 5_000, 100, 60_000);
  const databaseStatementTimeoutMs = integer(
    env,
    'DATABASE_STATEMENT_TIMEOUT_MS',
    statementTimeoutFor(databaseConnectTimeoutMs),
    0,
    3_600_000,
  );
  if (databaseStatementTimeoutMs >= databaseConnectTimeoutMs) {
    // The service stops waiting first and the statement runs on (and may commit) after a 503.
    throw new ConfigError(
      `DATABASE_STATEMENT_TIMEOUT_MS must be 0 or below DATABASE_CONNECT_TIMEOUT_MS (${databaseConnectTimeoutMs}), ` +
        `got "${databaseStatementTimeoutMs}": the service stops waiting for an answer at DATABASE_CONNECT_TIMEOUT_MS`,
    );
  }
  return {
    databaseUrl,
    appToken,
    migrationDatabaseUrl,
    databasePoolMax: integer(env, 'DATABASE_POOL_MAX', 10, 1, 1000),
    databaseConnectTimeoutMs,
    databaseStatementTimeoutMs,
    databasePreparedStatements: boolean(env, 'DATABASE_PREPARED_STATEMENTS', true),
  };
}

/** The webhook's settings: which receivers may be called, how long each may take, how many at once. */
function webhookConfig(env: NodeJS.ProcessEnv) {
  const webhookMaxInFlight = integer(env, 'WEBHOOK_MAX_IN_FLIGHT', 32, 1, 10_000);
  // The default share is 4 slots, or all of them when the process has fewer.
  const webhookMaxInFlightPerCompany = integer(
    env,
    'WEBHOOK_MAX_IN_FLIGHT_PER_COMPANY',
    Math.min(4, webhookMaxInFlight),
    1,
    10_000,
  );
  if (webhookMaxInFlightPerCompany > webhookMaxInFlight) {
    // A share above the whole would silently be the whole: say so instead.
    throw new ConfigError(
      `WEBHOOK_MAX_IN_FLIGHT_PER_COMPANY must be at most WEBHOOK_MAX_IN_FLIGHT (${webhookMaxInFlight}), ` +
        `got "${webhookMaxInFlightPerCompany}": a company's share is part of the process's places`,
    );
  }
  // The Standard Webhooks schedule: about three days in all.
  const webhookRetrySchedule = schedule(env, 'WEBHOOK_RETRY_SCHEDULE', '5s,5m,30m,2h,5h,10h,14h,20h,24h');
  const eventRetentionMs = duration(env, 'EVENT_RETENTION', '30d');
  const scheduleMs = webhookRetrySchedule.reduce((sum, wait) => sum + wait, 0);
  if (eventRetentionMs <= scheduleMs) {
    // An event would be forgotten while it is still retried, or soon after its last attempt.
    throw new ConfigError(
      `EVENT_RETENTION must be longer than WEBHOOK_RETRY_SCHEDULE's waits together (${Math.ceil(scheduleMs / 1000)} s), ` +
        `got "${env.EVENT_RETENTION}": an event must outlive its attempts`,
    );
  }
  return {
    webhookAllowedCidrs: Object.freeze(cidrList(env, 'WEBHOOK_ALLOWED_CIDRS')),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    webhookMaxInFlight,
    webhookMaxInFlightPerCompany,
    webhookRetrySchedule: Object.freeze(webhookRetrySchedule),
    webhookDisableAfterMs: duration(env, 'WEBHOOK_DISABLE_AFTER', '5d'),
    webhookRetryPollMs: integer(env, 'WEBHOOK_RETRY_POLL_MS', 1_000, 10, 60_000),
    webhookWorker: boolean(env, 'WEBHOOK_WORKER', true),
    eventRetentionMs,
    auditRetentionMs: duration(env, 'AUDIT_RETENTION', '365d'),
    eventSweepIntervalMs: eventSweepInterval(env),
  };
}

/** EVENT_SWEEP_INTERVAL: a timer's period, at most a day (a longer one would overflow Node's timers). */
function eventSweepInterval(env: NodeJS.ProcessEnv): number {
  const ms = duration(env, 'EVENT_SWEEP_INTERVAL', '10m');
  if (ms > 86_400_000)
    throw new ConfigError(`EVENT_SWEEP_INTERVAL must be at most 1d, got "${env.EVENT_SWEEP_INTERVAL}"`);
  return ms;
}

/** Each key's request budget and each company's share of a process. */
function limitsConfig(env: NodeJS.ProcessEnv) {
  const companyMaxInFlight = integer(env, 'COMPANY_MAX_IN_FLIGHT', 4, 1, 10_000);
  return {
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 600, 0, 1_000_000),
    companyMaxInFlight,
    companyMaxInFlightAlone: integer(
      env,
      'COMPANY_MAX_IN_FLIGHT_ALONE',
      Math.max(64, companyMaxInFlight),
      companyMaxInFlight,
      10_000,
    ),
    // At least one whole body (1 MiB), or a company could never send one.
    companyBytesInFlight: integer(env, 'COMPANY_BYTES_IN_FLIGHT', MIB, MIB, 1024 * MIB),
    bytesInFlight: integer(env, 'BYTES_IN_FLIGHT', 32 * MIB, MIB, 16 * 1024 * MIB),
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  return Object.freeze({
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: env.HOST || '127.0.0.1',
    logLevel,
    ...databaseConfig(env),
    webConcurrency: concurrency(env),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    validateResponses: boolean(env, 'VALIDATE_RESPONSES', true),
    warmValidators: boolean(env, 'WARM_VALIDATORS', false),
    ...webhookConfig(env),
    publicBaseUrl: publicBaseUrl(env, 'PUBLIC_BASE_URL'),
    trustProxy: boolean(env, 'TRUST_PROXY', false),
    ...limitsConfig(env),
  });
}
