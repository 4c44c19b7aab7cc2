// npm run test:stock: the main, slow and PgBouncer suites against one cluster of Debian's PostgreSQL,
// set up as production runs it (initdb's defaults: JIT on, fsync on), then the JIT check over every
// statement they sent (jit.test.ts). Tests that start a database of their own start a stock one too
// (TEST_POSTGRES=stock). The cluster is stopped by its pid at the end, on a failure or a signal.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { removeAbandonedClusters, startOwnedStockPostgres } from '../support/database.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MOCHA = path.join(ROOT, 'node_modules/.bin/mocha');

/** Each suite in turn, the JIT check last: it reads what the others ran. */
const SUITES: [string, string][] = [
  ['main', 'test/mocharc.main.json'],
  ['slow', 'test/mocharc.slow.json'],
  ['pgbouncer', 'test/pgbouncer/mocharc.json'],
  ['jit check', 'test/stock/mocharc.json'],
];
/** A suite still running after this long is hung (each takes minutes at most): it is ended. */
const SUITE_TIMEOUT_MS = 20 * 60_000;
/** How long a suite ended by a signal may take to stop its own servers before it is killed. */
const STOP_GRACE_MS = 15_000;

let running: ChildProcess | undefined;
let interrupted = false;

/** Ends the running suite: the signal first, SIGKILL if it is still there after the grace. */
function endSuite(child: ChildProcess, signal: NodeJS.Signals): void {
  child.kill(signal);
  setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS).unref();
}

/** Runs one mocha configuration against the cluster; resolves with its exit code (or signal). */
function runSuite(config: string, env: NodeJS.ProcessEnv): Promise<number | string> {
  return new Promise((resolve) => {
    const child = spawn(MOCHA, ['--config', config], { cwd: ROOT, env, stdio: 'inherit' });
    running = child;
    const timer = setTimeout(() => {
      console.error(`test:stock: ${config} still running after ${SUITE_TIMEOUT_MS / 60_000} minutes; ending it`);
      endSuite(child, 'SIGTERM');
    }, SUITE_TIMEOUT_MS);
    child.once('error', (err) => console.error(`test:stock: ${config} did not start: ${err.message}`));
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      running = undefined;
      resolve(code ?? signal ?? 'unknown');
    });
  });
}

async function createStatsExtension(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  } finally {
    await client.end();
  }
}

async function main(): Promise<number> {
  await removeAbandonedClusters();
  const server = await startOwnedStockPostgres();
  const results: string[] = [];
  try {
    await createStatsExtension(server.url);
    const env = { ...process.env, DATABASE_URL: server.url, TEST_POSTGRES: 'stock' };
    for (const [name, config] of SUITES) {
      if (interrupted) break;
      const started = Date.now();
      const outcome = await runSuite(config, env);
      const seconds = Math.round((Date.now() - started) / 1000);
      results.push(`${name}: ${outcome === 0 ? 'passed' : `FAILED (${outcome})`} in ${seconds} s`);
    }
  } finally {
    await server.remove();
  }
  console.log(`\ntest:stock on ${server.url.replace(/:[^:@]*@/, '@')}:\n  ${results.join('\n  ')}`);
  const passed = !interrupted && results.length === SUITES.length && results.every((r) => r.includes('passed'));
  return interrupted ? 130 : passed ? 0 : 1;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    interrupted = true;
    if (running) endSuite(running, signal);
  });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error('test:stock:', err);
    process.exit(1);
  },
);
