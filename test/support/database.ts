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
    embedded = await startEmbeddedPostgres(path.join(dir, 'pg'), undefined, { throwaway: true });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  // A cluster deleted after the run needs no durability: its commits and copies skip the flush to disk.
  for (const setting of ['fsync', 'synchronous_commit'])
    await onServer(embedded.url, `ALTER SYSTEM SET ${setting} = off`);
  await onServer(embedded.url, 'SELECT pg_reload_conf()');
  return { url: embedded.url, remove: () => embedded.stop().finally(() => rm(dir, { recursive: true, force: true })) };
}

/**
 * Each test process works in a database of its own, copied from the migrated one: the suites run in two
 * processes at once, and a background worker of one must never take the other's events (it would send
 * them with another receiver's trust and settle them with another retry policy). The copy's source is a
 * template made once after the migrations and never connected to, as CREATE DATABASE … TEMPLATE requires.
 */
const TEMPLATE_SUFFIX = '_template';

/** A URL to another database of the same server. */
function withDatabase(url: string, name: string): string {
  const other = new URL(url);
  other.pathname = `/${encodeURIComponent(name)}`;
  return other.toString();
}

const databaseName = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1));

/** Runs `sql` connected to `template1`, which is never a copy's source here and always exists. */
async function onServer(url: string, sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: withDatabase(url, 'template1') });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Makes the template the test processes copy (after the migrations of `url`'s database). */
export async function makeProcessTemplate(url: string): Promise<void> {
  const template = pg.escapeIdentifier(databaseName(url) + TEMPLATE_SUFFIX);
  await onServer(url, `DROP DATABASE IF EXISTS ${template}`);
  await onServer(url, `CREATE DATABASE ${template} TEMPLATE ${pg.escapeIdentifier(databaseName(url))}`);
}

/** This process's own copy of the migrated database, made now; its URL. */
export async function processDatabase(url: string): Promise<string> {
  const name = `${databaseName(url)}_p${process.pid}`;
  const template = databaseName(url) + TEMPLATE_SUFFIX;
  await onServer(url, `CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE ${pg.escapeIdentifier(template)}`);
  return withDatabase(url, name);
}

/** Drops the processes' copies and the template (a server given by DATABASE_URL is left as it was). */
export async function dropProcessDatabases(url: string): Promise<void> {
  const base = databaseName(url);
  const { rows } = await onServer(url, 'SELECT datname FROM pg_database');
  const ours = (rows as { datname: string }[])
    .map((row) => row.datname)
    .filter(
      (name) => name === base + TEMPLATE_SUFFIX || (/^_p\d+$/.test(name.slice(base.length)) && name.startsWith(base)),
    );
  for (const name of ours) await onServer(url, `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
}
