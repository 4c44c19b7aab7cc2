import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { APP_TOKEN, databaseUrl } from './harness.js';
import type { LogEntry } from './logs.js';
import { parentOf } from './processes.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface RunningServer {
  child: ChildProcess;
  baseUrl: string;
  port: number;
  logs: LogEntry[];
  /** Resolves with the first log line that has this message (and these fields). */
  logged(msg: string | RegExp, fields?: Record<string, unknown>): Promise<LogEntry>;
  exited: Promise<number | null>;
  /** SIGKILLs the process, if it still runs, and its workers that logged (by pid). */
  kill(): void;
}

/** The test database and token, a free port on loopback; `env` added. */
function serverEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: env.DATABASE_URL ?? databaseUrl(),
    APP_TOKEN,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    SHUTDOWN_TIMEOUT_MS: '30000',
    // Background attempts take any company's due events: only the tests of them turn them on, so that
    // no other test's server makes (and fails, unable to reach its receiver) another test's attempts.
    WEBHOOK_WORKER: 'false',
    ...env,
  };
}

/**
 * Runs the server (as `npm start` does, `env` added) until it exits and every holder of its output has
 * closed it (a worker left behind would keep stderr open): its exit code and stderr. Killed after 60 s.
 */
export async function runToExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: serverEnv(env),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(killer);
  return { code, stderr };
}

/**
 * Starts the server on a free port against the test database: `node --import tsx src/server.ts` as
 * `npm start` does, or the given node arguments; `env` is added to the environment.
 */
export async function startServer(
  args = ['--import', 'tsx', 'src/server.ts'],
  env: Record<string, string> = {},
): Promise<RunningServer> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: serverEnv(env), stdio: ['ignore', 'pipe', 'inherit'] });
  const logs: LogEntry[] = [];
  const waiters: { match: (e: LogEntry) => boolean; resolve: (e: LogEntry) => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const entry = JSON.parse(line) as LogEntry;
    logs.push(entry);
    for (const w of waiters.filter((w) => w.match(entry))) w.resolve(entry);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const logged = (msg: string | RegExp, fields: Record<string, unknown> = {}) => {
    const match = (e: LogEntry) =>
      (typeof msg === 'string' ? e.msg === msg : msg.test(e.msg)) &&
      Object.entries(fields).every(([k, v]) => e[k] === v);
    const seen = logs.find(match);
    if (seen) return Promise.resolve(seen);
    return Promise.race([
      new Promise<LogEntry>((resolve) => waiters.push({ match, resolve })),
      exited.then((code) => {
        throw new Error(`the server exited (${code}) before logging "${msg}"`);
      }),
    ]);
  };
  const kill = () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    // Its workers first (still its children, so no other process's pid), then the process itself.
    for (const pid of new Set(logs.map((e) => e.pid))) {
      if (typeof pid === 'number' && pid !== child.pid && parentOf(pid) === child.pid) process.kill(pid, 'SIGKILL');
    }
    child.kill('SIGKILL');
  };
  // Bounded, and never leaves the process behind: the caller has nothing to stop until this returns.
  const timer = new AbortController();
  const timeout = sleep(60_000, undefined, { signal: timer.signal }).then(() => {
    throw new Error('the server did not log "listening" within 60 s');
  });
  let baseUrl: string;
  try {
    baseUrl = String((await Promise.race([logged('listening'), timeout])).baseUrl);
  } catch (err) {
    kill();
    throw err;
  } finally {
    timer.abort();
  }
  return { child, baseUrl, port: Number(new URL(baseUrl).port), logs, logged, exited, kill };
}

/** Whether a new TCP connection to the port is refused. */
export function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}
