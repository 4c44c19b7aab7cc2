import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';
import { runMigrations } from './db/migrate.js';
import { createPool } from './db/pool.js';
import { createLogger } from './logger.js';
import { seedDemo } from './seed.js';
import { createNotifier } from './webhook/notifier.js';

const DATA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../.data');
const CREDENTIALS_FILE = path.join(DATA_DIR, 'credentials.json');

interface LocalCredentials { appToken: string; demoApiKey?: string; demoInspectorEmail?: string }

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

  await runMigrations(databaseUrl);
  const db = createPool({ connectionString: databaseUrl });

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
  const notifier = createNotifier({ allowedCidrs: config.webhookAllowedCidrs, timeoutMs: config.webhookTimeoutMs });
  const app = createApp({ db, logger, validateResponses: config.validateResponses, appToken, notifier });
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(config.port, config.host, () => resolve(s));
    s.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const baseUrl = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  logger.info({ baseUrl }, 'listening');

  if (credentials) {
    // Printed for the person at the terminal, not written to the log stream.
    process.stdout.write([
      '',
      `  Inspection Report Intake API on ${baseUrl} (embedded PostgreSQL, data in ${DATA_DIR})`,
      credentials.demoApiKey ? `  Demo API key (X-API-KEY):     ${credentials.demoApiKey}` : '',
      credentials.demoInspectorEmail ? `  Demo inspector e-mail:        ${credentials.demoInspectorEmail}` : '',
      `  Application token (Bearer):   ${credentials.appToken}`,
      `  Try: curl -H "X-API-KEY: ${credentials.demoApiKey ?? '<key>'}" ${baseUrl}/auth`,
      '',
      '',
    ].filter((l, i, all) => l !== '' || i === 0 || i === all.length - 1).join('\n'));
  }

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await db.end();
    await embedded?.stop();
    process.exit(0);
  };
  process.on('SIGTERM', (s) => void shutdown(s));
  process.on('SIGINT', (s) => void shutdown(s));
}

main().catch((err: unknown) => {
  console.error('Start-up failed:', err instanceof Error ? err.message : err);
  process.exit(1);
});
