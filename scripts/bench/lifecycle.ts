// What the benchmarks share: a fresh PostgreSQL (embedded, or BENCH_POSTGRES=stock), child processes
// stopped by pid on exit, a process's RSS and CPU, tables.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { chmod, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { runMigrations } from '../../src/db/migrate.js';
import { freePort, startEmbeddedPostgres } from '../../src/local/index.js';
import { startStockPostgres } from '../../test/support/stock-postgres.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const children = new Set<ChildProcess>();
/** Run after the children are stopped, in reverse order of registration (receivers, the database, its directory). */
const stoppers: (() => Promise<unknown>)[] = [];
export const onCleanUp = (stop: () => Promise<unknown>) => stoppers.push(stop);

async function cleanUp(): Promise<void> {
  for (const child of children) child.kill('SIGTERM');
  const killer = setTimeout(() => children.forEach((child) => child.kill('SIGKILL')), 10_000);
  await Promise.all([...children].map((child) => new Promise((resolve) => child.once('exit', resolve))));
  clearTimeout(killer);
  while (stoppers.length > 0) await stoppers.pop()!().catch(() => undefined);
}

/** Runs a benchmark's main and cleans up after it, whether it ends, fails (exit 1) or is interrupted (exit 130). */
export function runBench(main: () => Promise<void>): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
  }
  process.once('exit', () => children.forEach((child) => child.kill('SIGKILL')));
  main()
    .then(cleanUp)
    .catch(async (err: unknown) => {
      console.error(err);
      await cleanUp();
      process.exit(1);
    });
}

/** Which PostgreSQL the benchmarks run on: BENCH_POSTGRES=stock or embedded (the default). */
function benchPostgres(): 'embedded' | 'stock' {
  const kind = process.env.BENCH_POSTGRES ?? 'embedded';
  if (kind === 'embedded' || kind === 'stock') return kind;
  throw new Error(`BENCH_POSTGRES must be embedded or stock, not ${kind}`);
}

/** The server the benchmark runs on, as it reports itself: its kind, version, fsync and whether it compiles with JIT. */
export type BenchServer = { kind: 'embedded' | 'stock'; version: string; fsync: string; jit: boolean };

async function describeServer(kind: BenchServer['kind'], url: string): Promise<BenchServer> {
  const db = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000, query_timeout: 10_000 });
  await db.connect();
  try {
    const { rows } = await db.query<Omit<BenchServer, 'kind'>>(
      `SELECT current_setting('server_version') AS version, current_setting('fsync') AS fsync,
              pg_jit_available() AS jit`,
    );
    return { kind, ...rows[0]! };
  } finally {
    await db.end();
  }
}

export const serverLabel = ({ kind, version, fsync, jit }: BenchServer) =>
  `${kind} PostgreSQL ${version.split(' ')[0]} (fsync ${fsync}, JIT ${jit ? 'on' : 'off'})`;

/** The embedded PostgreSQL in dir, and its postmaster's pid. */
async function startEmbedded(dir: string) {
  const database = await startEmbeddedPostgres(path.join(dir, 'pg'));
  onCleanUp(() => database.stop());
  const postmaster = Number(readFileSync(path.join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
  return { url: database.url, postmaster };
}

/** Debian's PostgreSQL in a fresh cluster of its own (pg_stat_statements preloaded), and its postmaster's pid. */
async function startStock() {
  const server = await startStockPostgres();
  onCleanUp(() => server.remove());
  return { url: server.url, postmaster: server.pid()! };
}

/**
 * A fresh, migrated PostgreSQL (BENCH_POSTGRES), the pid of its postmaster, what it is, and a new
 * temporary directory for the benchmark's files, removed at clean-up. The directory is opened to other
 * users: the embedded cluster in it runs as OS user "postgres" under root.
 */
export async function startBenchDatabase(prefix: string) {
  const kind = benchPostgres();
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  onCleanUp(async () => rmSync(dir, { recursive: true, force: true }));
  await chmod(dir, 0o755);
  const { url, postmaster } = kind === 'stock' ? await startStock() : await startEmbedded(dir);
  await runMigrations(url);
  const server = await describeServer(kind, url);
  console.log(`PostgreSQL: ${serverLabel(server)}`);
  return { url, dir, postmaster, server };
}

/** Node with args from the project root, childEnv added to this environment, its stderr shown prefixed with name. */
function startChild(name: string, args: string[], childEnv: NodeJS.ProcessEnv, stdout: 'ignore' | 'pipe' = 'ignore') {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...childEnv },
    stdio: ['ignore', stdout, 'pipe'],
  });
  children.add(child);
  child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(`[${name}] ${chunk.toString()}`));
  child.once('exit', () => children.delete(child));
  return child;
}

/** A script of scripts/bench run as a process that prints `ready`, then its result as one JSON line. */
export async function runScript<T>(script: string, childEnv: NodeJS.ProcessEnv, started: () => Promise<unknown>) {
  const child = startChild(script, ['--import', 'tsx', `scripts/bench/${script}`], childEnv, 'pipe');
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  if ((await lines.next()).value !== 'ready') throw new Error(`${script} did not start`);
  const [during, last] = await Promise.all([started(), lines.next()]);
  if (last.done) throw new Error(`${script} ended without its result`);
  return { during, result: JSON.parse(last.value as string) as T };
}

/** Waits until url answers, and not 5xx (a service's /readyz: until it has built its validators). */
async function waitUntilUp(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (((await fetch(url).catch(() => undefined))?.status ?? 500) < 500) return;
    await sleep(100);
  }
  throw new Error(`${url} did not answer within 60 s`);
}

/**
 * A server started with node args on a port of 127.0.0.1 (PORT, HOST), up once `ready` answers 2xx:
 * by default the service (its /readyz), with no request budget it would reach, so that one key can
 * drive it at thousands of requests a second.
 */
export async function startServer(
  name: string,
  args: string[],
  databaseUrl: string,
  env: NodeJS.ProcessEnv = {},
  ready = '/readyz',
) {
  const port = await freePort();
  const appToken = `iat_${randomBytes(32).toString('base64url')}`;
  const base = { DATABASE_URL: databaseUrl, APP_TOKEN: appToken, PORT: String(port), HOST: '127.0.0.1' };
  const child = startChild(name, args, { ...base, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000', ...env });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilUp(`${url}${ready}`);
  return { pid: child.pid!, url, appToken };
}

/** The fields of /proc/PID/stat after the command name: [1] ppid, [11] utime, [12] stime, [13] cutime, [14] cstime. */
function statFields(pid: number | string): number[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat
    .slice(stat.lastIndexOf(') ') + 2)
    .split(' ')
    .map(Number);
}

export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024;
}

/**
 * CPU seconds used by a process and its children (PostgreSQL's postmaster and backends): its own, its
 * live children's, and those of its children that have exited, so that a backend ending meanwhile keeps its time.
 */
export function treeCpuSeconds(parent: number): number {
  const own = statFields(parent);
  let total = (own[11]! + own[12]! + own[13]! + own[14]!) / 100;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const child = statFields(entry);
      if (child[1] === parent) total += (child[11]! + child[12]!) / 100;
    } catch {
      // exited meanwhile
    }
  }
  return total;
}

export function formatTable(header: string[], lines: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(fmt)].join('\n');
}

/** The machine, for the reports: its cores are shared by the service, PostgreSQL and the load generators. */
export const machine = () =>
  `${os.cpus().length} × ${os.cpus()[0]?.model}, Node ${process.version}, load ${os.loadavg().map((l) => l.toFixed(1))}`;
