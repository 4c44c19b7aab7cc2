import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../platform/observability/logger.js';
import { DEMO_ADMIN_EMAIL, seedDemo, type DemoCredentials } from './demo-seed.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';

const DATA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../.data');
const CREDENTIALS_FILE = path.join(DATA_DIR, 'credentials.json');

type LocalCredentials = { appToken: string } & Partial<DemoCredentials>;

/** `npm start` without DATABASE_URL: what runs on this machine alone, for a newcomer to try at once. */
export interface LocalMode {
  databaseUrl: string;
  /** Generated on first start and kept in .data/ (APP_TOKEN, when set, is the one in force). */
  appToken: string;
  /**
   * On an empty (migrated) database: a demo company with one inspector and an API key, kept in .data/,
   * and its admin's one-time invitation, printed by this start's banner only.
   */
  seedDemo(): Promise<void>;
  /** Printed for the person at the terminal, not written to the log stream. */
  printBanner(baseUrl: string, appTokenFromEnv: boolean): void;
  stop(): Promise<void>;
}

/** Starts the embedded PostgreSQL under .data/ and reads (or makes) the credentials kept beside it (mode 0600). */
export async function startLocalMode(logger: Logger): Promise<LocalMode> {
  await mkdir(DATA_DIR, { recursive: true });
  logger.info({ dataDir: DATA_DIR }, 'starting embedded PostgreSQL');
  const embedded = await startEmbeddedPostgres(path.join(DATA_DIR, 'pg'));
  let credentials: LocalCredentials = existsSync(CREDENTIALS_FILE)
    ? (JSON.parse(await readFile(CREDENTIALS_FILE, 'utf8')) as LocalCredentials)
    : { appToken: `iat_${randomBytes(32).toString('base64url')}` };
  const saveCredentials = () => writeFile(CREDENTIALS_FILE, JSON.stringify(credentials, null, 2), { mode: 0o600 });
  if (!existsSync(CREDENTIALS_FILE)) await saveCredentials();
  let adminInvitation: string | undefined;

  return {
    databaseUrl: embedded.url,
    appToken: credentials.appToken,
    async seedDemo() {
      const demo = await seedDemo(embedded.url);
      if (demo) {
        credentials = { ...credentials, ...demo.credentials };
        adminInvitation = demo.adminInvitation;
        await saveCredentials();
      }
    },
    printBanner(baseUrl, appTokenFromEnv) {
      const lines = [
        `  Inspection Report Intake API on ${baseUrl} (embedded PostgreSQL, data in ${DATA_DIR})`,
        credentials.demoApiKey && `  Demo API key (X-API-KEY):     ${credentials.demoApiKey}`,
        credentials.demoInspectorEmail && `  Demo inspector e-mail:        ${credentials.demoInspectorEmail}`,
        // A token from APP_TOKEN is the one in force, and the person who set it knows it.
        appTokenFromEnv
          ? '  Application token (Bearer):   the one in APP_TOKEN'
          : `  Application token (Bearer):   ${credentials.appToken}`,
        `  Console (sign in with it):    ${baseUrl}/console`,
        adminInvitation &&
          `  Demo admin (${DEMO_ADMIN_EMAIL}), one-time invitation, valid 72 h: ${baseUrl}/console/invitations/${adminInvitation}`,
        `  Try: curl -H "X-API-KEY: ${credentials.demoApiKey ?? '<key>'}" ${baseUrl}/auth`,
      ].filter(Boolean);
      process.stdout.write(['', ...lines, '', ''].join('\n'));
    },
    stop: () => embedded.stop(),
  };
}
