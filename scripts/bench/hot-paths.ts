/**
 * `npm run bench`: the service's hot paths under load, side by side with the straightforward
 * implementation (scripts/bench/straightforward/) and a bare Express, all measured in the same run on
 * the same machine.
 *
 * Starts a fresh embedded PostgreSQL in a temporary directory, seeds a company with 1,000 reports and
 * one with 1,000,000 (set-based SQL) and copies them into the straightforward implementation's schema,
 * builds the service (`npm run build`) and starts it as in production, starts the straightforward
 * implementation and bare Express (a constant report), all as child processes, drives each case with
 * autocannon for a fixed time (bare Express first and last; the compared operations against the
 * service and the straightforward implementation back to back, alternating which goes first), samples
 * RSS and CPU from /proc, prints the tables and the targets met or missed (hot-paths-settings.ts), and
 * writes the same figures as JSON.
 *
 * Environment (all optional): BENCH_DURATION (seconds per case, default 8), BENCH_WARMUP (seconds,
 * default 2), BENCH_CONNECTIONS (default 16), BENCH_LARGE (reports in the large company, default
 * 1000000), BENCH_OUT (default bench-results.json), BENCH_CPU_PROF (a directory: the service writes
 * a V8 CPU profile there on exit), BENCH_ONLY (comma-separated case names), BENCH_WORKERS (default 2:
 * every service case is driven again, right after, against the service with that many workers,
 * WEB_CONCURRENCY; 1: not); VALIDATE_RESPONSES and DATABASE_POOL_MAX are passed to the service.
 *
 * The parts: hot-paths-settings.ts (the environment, the targets), hot-paths-targets.ts (the processes),
 * hot-paths-cases.ts, hot-paths-run.ts (driving them), hot-paths-results.ts and hot-paths-print.ts.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { buildCases } from './hot-paths-cases.js';
import { printReport } from './hot-paths-print.js';
import { buildReport, summarize } from './hot-paths-results.js';
import { CaseRunner } from './hot-paths-run.js';
import { CPU_PROF_DIR, LARGE, OUT, SMALL } from './hot-paths-settings.js';
import { startTargets } from './hot-paths-targets.js';
import { cleanUpOnSignals, runBench, startBenchDatabase, stopChild } from './lifecycle.js';
import { postmasterPid, treeCpuSeconds } from './proc-stats.js';
import { seedCompany } from './seed.js';
import { createStraightforwardSchema } from './straightforward/schema.js';
import { measureWriteShapes } from './write-shapes.js';

// Everything started here is stopped on exit, error and Ctrl-C (lifecycle.ts).
cleanUpOnSignals();

/** The two companies, then the straightforward implementation's copy of them. */
async function seed(databaseUrl: string, started: number) {
  const seeder = new pg.Client({ connectionString: databaseUrl });
  await seeder.connect();
  await seeder.query('SET synchronous_commit = off');
  console.log(`seeding ${SMALL} + ${LARGE} reports, then the straightforward implementation's copy of them`);
  const small = await seedCompany(seeder, 'Small', SMALL);
  const large = await seedCompany(seeder, 'Large', LARGE);
  await seeder.query('VACUUM ANALYZE');
  await createStraightforwardSchema(seeder);
  await seeder.end();
  console.log(`seeded in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return { small, large };
}

async function main(): Promise<void> {
  const started = Date.now();
  const { database, dir: tempDir } = await startBenchDatabase('intake-bench-pg-');
  const { small, large } = await seed(database.url, started);
  const smallHeaders = { 'x-api-key': small.key };
  const largeHeaders = { 'x-api-key': large.key };
  const targets = await startTargets(database.url, smallHeaders, largeHeaders);
  const cases = buildCases({ smallHeaders, largeHeaders, large, reference: targets.reference });

  const postmaster = postmasterPid(path.join(tempDir, 'pg'));
  const runner = new CaseRunner(targets, database.url, postmaster, smallHeaders);
  await runner.runAll(cases);
  console.log('write shapes: PostgreSQL CPU per report written, straight through pg');
  const writeShapes = await measureWriteShapes(database.url, large, () => treeCpuSeconds(postmaster));

  const figures = summarize(runner.rows, cases, targets, runner.stoppedHwm);
  await Promise.all(targets.running.map(stopChild));
  const report = buildReport(figures, runner.rows, targets.serviceIdleRssMb, writeShapes, started);
  await writeFile(OUT, `${JSON.stringify(report, null, 2)}\n`);
  printReport(figures, report);
  if (CPU_PROF_DIR && existsSync(CPU_PROF_DIR)) console.log(`CPU profile written to ${CPU_PROF_DIR}`);
}

runBench(main);
