// Debian's own PostgreSQL (the postgresql-15 package) in a fresh cluster of a test's own, as an
// operator runs it: initdb's defaults (fsync on, JIT on), started by its pid on a loopback port.
// Tests that must hold on the server production runs use it, and so does a whole suite when
// TEST_POSTGRES=stock (see docs/testing.md).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePort } from '../../src/local/index.js';

const USER = 'postgres';
const PASSWORD = 'postgres';
const START_TIMEOUT_MS = 30_000;

/** The settings a test cluster adds to initdb's: room for the suites' pools, and pg_stat_statements. */
export const TEST_SETTINGS: Record<string, string> = {
  listen_addresses: "'127.0.0.1'",
  unix_socket_directories: "''",
  max_connections: '200',
  shared_preload_libraries: "'pg_stat_statements'",
};

/** The newest installed Debian PostgreSQL's binaries (PG_BINDIR overrides), or undefined. */
export function stockBinDir(): string | undefined {
  if (process.env.PG_BINDIR) return process.env.PG_BINDIR;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] && path.join(root, versions[0], 'bin');
}

export const hasStockPostgres = (): boolean => stockBinDir() !== undefined;

/** As root, PostgreSQL's programs run as the OS user "postgres" (they refuse root). */
function osUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(spawnSync('id', [flag, USER], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  if (!Number.isInteger(uid) || uid <= 0)
    throw new Error('run as root, the stock PostgreSQL needs the OS user "postgres"');
  return { uid, gid: id('-g') };
}

function bin(name: string): string {
  const dir = stockBinDir();
  if (!dir) throw new Error("Debian's PostgreSQL is not installed (apt-get install -y postgresql-15)");
  return path.join(dir, name);
}

/** Runs one of PostgreSQL's programs to its end (as "postgres" when root); throws with its output on failure. */
export function runPgProgram(name: string, args: string[]): void {
  const result = spawnSync(bin(name), args, { ...osUser(), encoding: 'utf8', timeout: 120_000 });
  if (result.status !== 0) {
    throw new Error(`${name} failed (${result.status ?? result.signal}): ${result.stderr || result.stdout}`);
  }
}

/** A folder the OS user "postgres" owns and may enter, under a new temporary directory. */
export async function newPgDir(label: string): Promise<{ root: string; dataDir: string }> {
  const root = await mkdtemp(path.join(os.tmpdir(), `intake-stock-pg-${label}-`));
  await chmod(root, 0o755);
  const dataDir = path.join(root, 'data');
  await writeFile(path.join(root, 'pwfile'), PASSWORD, { mode: 0o644 });
  const user = osUser();
  if (user) await chown(root, user.uid, user.gid);
  return { root, dataDir };
}

export interface StockPostgres {
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** The postmaster's pid while it runs. */
  pid(): number | undefined;
  /** Everything the server wrote to its log. */
  log(): string;
  /** Starts the server (again) on its port, and waits until it accepts connections. */
  start(): Promise<void>;
  /** A fast shutdown; resolves once the postmaster has exited. */
  stop(): Promise<void>;
  /** kill -9 of the postmaster, as a crash of the host would end it; resolves once it has exited. */
  kill(): Promise<void>;
  /** Stops the server and deletes its files. */
  remove(): Promise<void>;
}

/** The URL of a server on this port, as the suites connect. */
export const urlOf = (port: number, database = 'postgres') =>
  `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;

/** Runs `postgres` on an existing data directory, by its pid, with settings added to its own. */
export function stockServer(
  root: string,
  dataDir: string,
  port: number,
  settings: Record<string, string> = {},
): StockPostgres {
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let output = '';
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  const waitExit = async (signal: NodeJS.Signals) => {
    if (!running()) return;
    child!.kill(signal);
    const killer = setTimeout(() => child?.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(killer);
  };
  const server: StockPostgres = {
    url: urlOf(port),
    port,
    dataDir,
    pid: () => (running() ? child!.pid : undefined),
    log: () => output,
    async start() {
      if (running()) return;
      const flags = Object.entries({ port: String(port), ...TEST_SETTINGS, ...settings }).flatMap(([k, v]) => [
        '-c',
        `${k}=${v.replace(/^'(.*)'$/, '$1')}`,
      ]);
      child = spawn(bin('postgres'), ['-D', dataDir, ...flags], { ...osUser(), stdio: ['ignore', 'pipe', 'pipe'] });
      const started = child;
      exited = new Promise((resolve) => started.once('exit', () => resolve()));
      started.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      started.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      await waitAccepting(server, started);
    },
    stop: () => waitExit('SIGINT'),
    kill: () => waitExit('SIGKILL'),
    async remove() {
      await server.stop();
      await rm(root, { recursive: true, force: true });
    },
  };
  return server;
}

async function waitAccepting(server: StockPostgres, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    const client = new pg.Client({ connectionString: server.url, connectionTimeoutMillis: 1_000 });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (err) {
      await client.end().catch(() => undefined);
      // A standby in recovery accepts connections to read: "the database system is starting up" is not yet.
      if (/hot standby|read-only/i.test(String(err))) return;
      await sleep(100);
    }
  }
  throw new Error(`the stock PostgreSQL in ${server.dataDir} did not start:\n${server.log()}`);
}

/** A fresh cluster of Debian's PostgreSQL (initdb's defaults, scram passwords), started. */
export async function startStockPostgres(settings: Record<string, string> = {}): Promise<StockPostgres> {
  const { root, dataDir } = await newPgDir('primary');
  try {
    runPgProgram('initdb', [
      '-D',
      dataDir,
      '-U',
      USER,
      `--pwfile=${path.join(root, 'pwfile')}`,
      '--auth=scram-sha-256',
      '--encoding=UTF8',
      '--locale=C.UTF-8',
    ]);
    const server = stockServer(root, dataDir, await freePort(), settings);
    await server.start();
    return server;
  } catch (err) {
    await rm(root, { recursive: true, force: true });
    throw err;
  }
}

/**
 * A hot standby of primary (pg_basebackup -R: it streams the primary's changes and refuses writes until
 * promoted), started on a port of its own once it accepts connections to read.
 */
export async function startStandby(primary: StockPostgres, applicationName?: string): Promise<StockPostgres> {
  const { root, dataDir } = await newPgDir('standby');
  // The name the standby streams under: the one a primary's synchronous_standby_names lists.
  const source = applicationName ? `${primary.url}?application_name=${applicationName}` : primary.url;
  try {
    runPgProgram('pg_basebackup', ['-d', source, '-D', dataDir, '-R', '-X', 'stream', '-c', 'fast']);
    const server = stockServer(root, dataDir, await freePort());
    await server.start();
    return server;
  } catch (err) {
    await rm(root, { recursive: true, force: true });
    throw err;
  }
}
