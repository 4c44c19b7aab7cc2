import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { runMigrations } from '../../src/db/migrate.js';
import { isAlive, startEmbeddedPostgres, stopLeftoverPostgres, type EmbeddedDatabase } from '../../src/local/index.js';
import { startStockPostgres, type StockPostgres } from './stock-postgres.js';

const PREFIX = 'intake-test-pg-';
/** Where startStockPostgres puts its clusters; only those a test run marked with owner.pid are its own. */
const STOCK_PREFIX = 'intake-stock-pg-';

/** TEST_POSTGRES=stock: the tests' databases are Debian's PostgreSQL (npm run test:stock), not embedded ones. */
export const stockRequested = (): boolean => process.env.TEST_POSTGRES === 'stock';

/** Clusters of test runs that were killed before they could stop them: stop them and delete their files. */
export async function removeAbandonedClusters(): Promise<void> {
  for (const name of await readdir(os.tmpdir())) {
    const stock = name.startsWith(STOCK_PREFIX);
    if (!name.startsWith(PREFIX) && !stock) continue;
    const dir = path.join(os.tmpdir(), name);
    const ownerFile = path.join(dir, 'owner.pid');
    // A stock cluster without an owner is another tool's (a standby's, say), or is still being made.
    if (stock && !existsSync(ownerFile)) continue;
    const owner = existsSync(ownerFile) ? Number(await readFile(ownerFile, 'utf8')) : 0;
    if (owner > 0 && isAlive(owner)) continue;
    await stopLeftoverPostgres(path.join(dir, stock ? 'data' : 'pg')).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

/** A fresh stock cluster owned by this process: a later run removes it if this one is killed first. */
export async function startOwnedStockPostgres(settings: Record<string, string> = {}): Promise<StockPostgres> {
  const server = await startStockPostgres(settings);
  await writeFile(path.join(path.dirname(server.dataDir), 'owner.pid'), String(process.pid));
  return server;
}

/**
 * A temporary directory for an embedded cluster, owned by this process: a later run removes it if
 * this one is killed before it can.
 */
async function newClusterDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), PREFIX));
  await chmod(dir, 0o755); // the cluster runs as OS user "postgres" when the tests run as root
  await writeFile(path.join(dir, 'owner.pid'), String(process.pid));
  return dir;
}

/** A PostgreSQL of a test's own, to stop and start again under a running app. */
export interface OwnDatabase {
  /** Its address, the same after a restart (the same port). */
  readonly url: string;
  /** Its data directory (postmaster.pid names the server's process). */
  readonly dataDir: string;
  /** Stops the server and keeps its files: the database goes away. */
  stop(): Promise<void>;
  /** Starts it again where its clients expect it: the database comes back. */
  restart(): Promise<void>;
  /** Stops it and deletes its files. */
  remove(): Promise<void>;
}

/**
 * A fresh cluster (not migrated), never the shared test database: for tests that stop their database.
 * Embedded, or Debian's PostgreSQL when TEST_POSTGRES=stock.
 */
export async function startOwnDatabase(): Promise<OwnDatabase> {
  if (stockRequested()) return ownStockDatabase(await startOwnedStockPostgres());
  const dir = await newClusterDir();
  const dataDir = path.join(dir, 'pg');
  let embedded: EmbeddedDatabase;
  try {
    embedded = await startEmbeddedPostgres(dataDir);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const port = Number(new URL(embedded.url).port);
  return {
    url: embedded.url,
    dataDir,
    stop: () => embedded.stop(),
    restart: async () => {
      embedded = await startEmbeddedPostgres(dataDir, port);
    },
    remove: async () => {
      await embedded.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A database of a test's own in a running cluster, migrated. */
export interface ClusterDatabase {
  readonly url: string;
  readonly name: string;
  /** Runs one statement on the cluster's own database (ALTER DATABASE needs a session elsewhere). */
  admin(sql: string): Promise<void>;
  /** Ends its sessions and drops it. */
  drop(): Promise<void>;
}

/**
 * A fresh database in the cluster at clusterUrl, migrated: for a setting of its own (ALTER DATABASE … SET)
 * that the shared test database must not get, without the seconds a cluster of its own takes to start.
 */
export async function createClusterDatabase(clusterUrl: string, label: string): Promise<ClusterDatabase> {
  const name = `intake_${label}_${process.pid}_${Date.now().toString(36)}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: clusterUrl, connectionTimeoutMillis: 10_000 });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(clusterUrl);
  url.pathname = `/${name}`;
  const drop = () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await runMigrations(url.toString()).catch(async (err: unknown) => {
    await drop();
    throw err;
  });
  return { url: url.toString(), name, admin, drop };
}

/** A stock server as an own database: stopped by its pid, started again on the same port and data. */
function ownStockDatabase(server: StockPostgres): OwnDatabase {
  return {
    url: server.url,
    dataDir: server.dataDir,
    stop: () => server.stop(),
    restart: () => server.start(),
    remove: () => server.remove(),
  };
}

export interface TestDatabase {
  url: string;
  stop(): Promise<void>;
}

/**
 * The PostgreSQL the tests run against: the server in DATABASE_URL when given, otherwise a fresh
 * cluster (embedded, or stock when TEST_POSTGRES=stock) in a temporary directory, removed when the run
 * ends (also on SIGINT/SIGTERM).
 */
export async function startTestDatabase(): Promise<TestDatabase> {
  const given = process.env.DATABASE_URL;
  if (given) {
    await runMigrations(given);
    return { url: given, stop: async () => undefined };
  }
  await removeAbandonedClusters();
  const started = stockRequested() ? await startOwnedStockPostgres() : await startEmbeddedCluster();
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= started.remove());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void stop().finally(() => process.exit(130)));
  }
  await runMigrations(started.url);
  return { url: started.url, stop };
}

/** A fresh embedded cluster in a directory of its own; remove() stops it and deletes the directory. */
async function startEmbeddedCluster(): Promise<{ url: string; remove(): Promise<void> }> {
  const dir = await newClusterDir();
  let embedded: EmbeddedDatabase;
  try {
    embedded = await startEmbeddedPostgres(path.join(dir, 'pg'));
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return { url: embedded.url, remove: () => embedded.stop().finally(() => rm(dir, { recursive: true, force: true })) };
}
