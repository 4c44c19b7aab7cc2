// The entry point (`npm start`; dist/server.js in production): reads the configuration, starts local
// development without DATABASE_URL, migrates, then serves (serving-process.ts) or supervises the
// cluster's workers, and stops them on a signal.

import cluster from 'node:cluster';
import { startWorkers } from './cluster.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { runMigrations } from './db/migrate.js';
import { createPool } from './db/pool.js';
import { startLocalMode } from './local/index.js';
import { createLogger, type Logger } from './platform/observability/logger.js';

/**
 * One connection as the pool opens them, before serving. PgBouncer refuses statement_timeout as a
 * startup parameter, which would fail every request; any other failure (the database is down) is
 * what requests get 503 for until it is back.
 */
async function checkPoolConnection(config: Config, databaseUrl: string): Promise<void> {
  const probe = createPool({
    connectionString: databaseUrl,
    max: 1,
    connectionTimeoutMillis: config.databaseConnectTimeoutMs,
    statementTimeoutMillis: config.databaseStatementTimeoutMs,
  });
  try {
    await probe.query('SELECT 1');
  } catch (err) {
    if (/unsupported startup parameter: statement_timeout/.test(String(err))) {
      throw new ConfigError(
        'DATABASE_STATEMENT_TIMEOUT_MS: the server at DATABASE_URL (PgBouncer) refuses statement_timeout as a ' +
          'startup parameter; set DATABASE_STATEMENT_TIMEOUT_MS=0 and put the timeout on the database role ' +
          "(ALTER ROLE … SET statement_timeout = '4s', below DATABASE_CONNECT_TIMEOUT_MS)",
      );
    }
  } finally {
    await probe.end();
  }
}

/** Stops gracefully on SIGTERM and SIGINT (once), then exits 0; exits 1 if stopping fails. */
function onShutdownSignal(logger: Logger, stop: (signal: string) => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    stop(signal).then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/** A cluster worker: serves with the database and token its primary put in its environment. */
async function runWorker(config: Config, logger: Logger): Promise<void> {
  const { startServingProcess } = await import('./serving-process.js');
  const serving = await startServingProcess(config, config.databaseUrl!, config.appToken!, logger);
  onShutdownSignal(logger, (signal) => serving.stop(signal));
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`Configuration error: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  if (cluster.isWorker) return runWorker(config, logger);

  const local = config.databaseUrl === undefined ? await startLocalMode(logger) : undefined;
  const databaseUrl = config.databaseUrl ?? local!.databaseUrl;
  await runMigrations(config.migrationDatabaseUrl ?? databaseUrl);
  await checkPoolConnection(config, databaseUrl);
  await local?.seedDemo();
  const appToken = config.appToken ?? local?.appToken;
  if (appToken === undefined) throw new Error('no application token: set APP_TOKEN');

  // Migrations, the seed and the embedded PostgreSQL happen once, here; then either this process
  // serves, or the workers do (each with its own pool and key cache), and this one supervises them.
  let stopServing: (signal: string) => Promise<void>;
  let port: number;
  if (config.webConcurrency > 1) {
    const workers = startWorkers({
      workers: config.webConcurrency,
      // The workers read their configuration from the environment, as this process did.
      env: { DATABASE_URL: databaseUrl, APP_TOKEN: appToken },
      logger,
      shutdownTimeoutMs: config.shutdownTimeoutMs,
    });
    stopServing = () => workers.stop();
    port = await workers.listening;
  } else {
    const { startServingProcess } = await import('./serving-process.js');
    const serving = await startServingProcess(config, databaseUrl, appToken, logger);
    stopServing = (signal) => serving.stop(signal);
    port = Number(new URL(serving.baseUrl).port);
  }
  onShutdownSignal(logger, async (signal) => {
    await stopServing(signal);
    await local?.stop();
  });

  local?.printBanner(
    `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
    config.appToken !== undefined,
  );
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) console.error(`Configuration error: ${err.message}`);
  else console.error('Start-up failed:', err instanceof Error ? err.message : err);
  process.exit(1);
});
