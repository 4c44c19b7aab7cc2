import { randomBytes } from 'node:crypto';
/**
 * What the benchmarks share: a fresh embedded PostgreSQL in a temporary directory, child processes
 * started from the project root, their clean-up (by pid) on exit, error and Ctrl-C, RSS from /proc,
 * and the plain-text tables they print.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { chmod, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/local/index.js';
import { runMigrations } from '../../src/db/migrate.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const children = new Set<ChildProcess>();
/** Stopped after the children, in reverse order of registration (receivers, the database). */
const stoppers: (() => Promise<unknown>)[] = [];
const tempDirs = new Set<string>();

/** Runs stop at clean-up, after every child process has been stopped. */
export function onCleanUp(stop: () => Promise<unknown>): void {
  stoppers.push(stop);
}

/** Stops every child process (SIGTERM, then SIGKILL after 10 s), then what onCleanUp registered, then removes the temporary directories. */
export async function cleanUp(): Promise<void> {
  await Promise.all([...children].map(stopChild));
  while (stoppers.length > 0) await stoppers.pop()!().catch(() => undefined);
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

/** Ctrl-C and SIGTERM clean up, then exit 130; a plain exit SIGKILLs the children still running. */
export function cleanUpOnSignals(): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
  }
  process.once('exit', () => {
    for (const child of children) child.kill('SIGKILL');
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  });
}

/**
 * A fresh PostgreSQL in a new temporary directory (prefix: its name), migrated, stopped at clean-up.
 * The directory is opened to other users: the cluster runs as OS user "postgres" when this runs as root.
 */
export async function startBenchDatabase(prefix: string): Promise<{ database: EmbeddedDatabase; dir: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  await chmod(dir, 0o755);
  console.log(`starting PostgreSQL in ${dir}`);
  const database = await startEmbeddedPostgres(path.join(dir, 'pg'));
  onCleanUp(() => database.stop());
  await runMigrations(database.url);
  return { database, dir };
}

/** Node with args, from the project root, with childEnv added to this environment; stderr is shown prefixed with name. */
export function startChild(
  name: string,
  args: string[],
  childEnv: NodeJS.ProcessEnv,
  stdout: 'ignore' | 'pipe' = 'ignore',
): ChildProcess {
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

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Waits until url answers 2xx (a service's /readyz: also until it has built its validators). */
export async function waitUntilUp(url: string, headers: Record<string, string> = {}): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      const res = await fetch(url, { headers });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${url} did not answer within 60 s`);
}

/** Resident set size of a process in MB: the current one and the peak (high-water mark). */
export function memory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

/** Columns padded to their widest cell: the first left-aligned, the others right-aligned. */
export function formatTable(header: string[], lines: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(fmt)].join('\n');
}

/** Runs a benchmark's main and cleans up after it, whether it ends or fails (then exit code 1). */
export function runBench(main: () => Promise<void>): void {
  main()
    .then(cleanUp)
    .catch(async (err: unknown) => {
      console.error(err);
      await cleanUp();
      process.exit(1);
    });
}

/** The service's environment in the bench, listening on port. */
export function serviceEnv(databaseUrl: string, port: number, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    DATABASE_URL: databaseUrl,
    APP_TOKEN: `iat_${randomBytes(32).toString('base64url')}`,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    // One key drives each case at thousands of requests a second: a budget it never reaches, so the
    // limiter's cost is measured without its refusals.
    RATE_LIMIT_PER_MINUTE: '1000000',
    ...extra,
  };
}
