import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';
import { runMigrations } from './db/migrate.js';
import { createPool } from './db/pool.js';
import { listen, stopServer } from './http-server.js';
import { createLogger } from './logger.js';
import { ApiKeyCache } from './store/api-key-cache.js';
import { seedDemo } from './seed.js';
import { createNotifier } from './webhook/notifier.js';

const DATA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../.data');
const CREDENTIALS_FILE = path.join(DATA_DIR, 'credentials.json');

interface LocalCredentials {
  appToken: string;
  demoApiKey?: string;
  demoInspectorEmail?: string;
}

/** With the embedded default, the application token and the demo key live in .data/ (mode 0600). */
async function localCredentials(): Promise<LocalCredentials> {
  if (existsSync(CREDENTIALS_FILE)) return JSON.parse(await readFile(CREDENTIALS_FILE, 'utf8')) as LocalCredentials;
  const credentials = { appToken: `iat_${randomBytes(32).toString('base64url')}` };
  await writeFile(CREDENTIALS_FILE, JSON.stringify(credentials, null, 2), { mode: 0o600 });
  return credentials;
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

  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  let credentials: LocalCredentials | undefined;
  if (databaseUrl === undefined) {
    await mkdir(DATA_DIR, { recursive: true });
    logger.info({ dataDir: DATA_DIR }, 'starting embedded PostgreSQL');
    embedded = await startEmbeddedPostgres(path.join(DATA_DIR, 'pg'));
    databaseUrl = embedded.url;
    credentials = await localCredentials();
  }

  await runMigrations(config.migrationDatabaseUrl ?? databaseUrl);
  const db = createPool({
    connectionString: databaseUrl,
    max: config.databasePoolMax,
    connectionTimeoutMillis: config.databaseConnectTimeoutMs,
    statementTimeoutMillis: config.databaseStatementTimeoutMs,
  });

  if (credentials) {
    const demo = await seedDemo(db);
    if (demo) {
      credentials = { ...credentials, demoApiKey: demo.apiKey, demoInspectorEmail: demo.inspectorEmail };
      await writeFile(CREDENTIALS_FILE, JSON.stringify(credentials, null, 2), { mode: 0o600 });
    }
  }

  const appToken = config.appToken ?? credentials?.appToken;
  if (appToken === undefined) throw new Error('no application token: set APP_TOKEN');
  // Extra CAs for receivers come from Node's own NODE_EXTRA_CA_CERTS, read at process start.
  const notifier = createNotifier({
    allowedCidrs: config.webhookAllowedCidrs,
    timeoutMs: config.webhookTimeoutMs,
    maxInFlight: config.webhookMaxInFlight,
  });
  // Keys cached in the process, revoked across processes through LISTEN/NOTIFY (see ApiKeyCache).
  // LISTEN needs a session of its own, so it takes the direct connection, as migrations do.
  const apiKeys = new ApiKeyCache({ db, connectionString: config.migrationDatabaseUrl ?? databaseUrl });
  const app = createApp({ db, logger, validateResponses: config.validateResponses, appToken, notifier, apiKeys });
  const server = await listen(app, config.port, config.host);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const baseUrl = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  logger.info({ baseUrl }, 'listening');

  if (credentials) {
    // Printed for the person at the terminal, not written to the log stream.
    process.stdout.write(
      [
        '',
        `  Inspection Report Intake API on ${baseUrl} (embedded PostgreSQL, data in ${DATA_DIR})`,
        credentials.demoApiKey ? `  Demo API key (X-API-KEY):     ${credentials.demoApiKey}` : '',
        credentials.demoInspectorEmail ? `  Demo inspector e-mail:        ${credentials.demoInspectorEmail}` : '',
        // A token from APP_TOKEN is the one in force, and the person who set it knows it.
        config.appToken === undefined
          ? `  Application token (Bearer):   ${credentials.appToken}`
          : '  Application token (Bearer):   the one in APP_TOKEN',
        `  Try: curl -H "X-API-KEY: ${credentials.demoApiKey ?? '<key>'}" ${baseUrl}/auth`,
        '',
        '',
      ]
        .filter((l, i, all) => l !== '' || i === 0 || i === all.length - 1)
        .join('\n'),
    );
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const drained = stopServer(server, config.shutdownTimeoutMs);
    // Logged once the listening socket is closed: from here on new connections are refused.
    logger.info(
      { signal, timeoutMs: config.shutdownTimeoutMs },
      'shutting down: refusing new connections, finishing requests in flight',
    );
    if (!(await drained)) {
      logger.warn(
        { timeoutMs: config.shutdownTimeoutMs },
        'requests still running at SHUTDOWN_TIMEOUT_MS were cut off',
      );
    }
    await apiKeys.close();
    await db.end();
    await embedded?.stop();
    logger.info('stopped');
    process.exit(0);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    shutdown(signal).catch((err: unknown) => {
      logger.error({ err }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

main().catch((err: unknown) => {
  console.error('Start-up failed:', err instanceof Error ? err.message : err);
  process.exit(1);
});
