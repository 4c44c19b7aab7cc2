/**
 * `npm run bench`: the service's hot paths under load, side by side with the straightforward
 * implementation (scripts/bench/straightforward/) and a bare Express, all measured in the same run on
 * the same machine.
 *
 * Starts a fresh embedded PostgreSQL in a temporary directory, seeds a company with 1,000 reports and
 * one with 1,000,000 (set-based SQL) and copies them into the straightforward implementation's schema,
 * builds the service (`npm run build`) and starts it as in production, starts the straightforward
 * implementation and bare Express (a constant report), all as child processes, drives each case with
 * autocannon for a fixed time (bare Express first and last; the four compared operations against the
 * service and the straightforward implementation back to back, alternating which goes first), samples
 * RSS and CPU from /proc, prints the tables and the targets of issue 14 met or missed, and writes the
 * same figures as JSON.
 *
 * Environment (all optional): BENCH_DURATION (seconds per case, default 8), BENCH_WARMUP (seconds,
 * default 2), BENCH_CONNECTIONS (default 16), BENCH_LARGE (reports in the large company, default
 * 1000000), BENCH_OUT (default bench-results.json), BENCH_CPU_PROF (a directory: the service writes
 * a V8 CPU profile there on exit), BENCH_ONLY (comma-separated case names), BENCH_WORKERS (default 2:
 * every service case is driven again, right after, against the service with that many workers,
 * WEB_CONCURRENCY; 1: not); VALIDATE_RESPONSES and DATABASE_POOL_MAX are passed to the service.
 */
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../src/ports-and-pids.js';
import { createStraightforwardSchema } from './straightforward/schema.js';
import { benchReport, seedCompany } from './seed.js';
import {
  cleanUpOnSignals,
  formatTable,
  memory,
  ROOT,
  runBench,
  startBenchDatabase,
  startChild,
  stopChild,
  waitUntilUp,
} from './lifecycle.js';
import { measureWriteShapes } from './write-shapes.js';
import { buildProduction } from '../production-build.js';

const env = process.env;
const DURATION = Number(env.BENCH_DURATION ?? 8);
const WARMUP = Number(env.BENCH_WARMUP ?? 2);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 16);
const SMALL = 1_000;
const LARGE = Number(env.BENCH_LARGE ?? 1_000_000);
const OUT = path.resolve(ROOT, env.BENCH_OUT ?? 'bench-results.json');
const WORKERS = Number(env.BENCH_WORKERS ?? 2);
const ONLY = env.BENCH_ONLY?.split(',')
  .map((s) => s.trim())
  .filter(Boolean);

// ---------------------------------------------------------------------------------------------
// Processes and clean-up (scripts/bench/lifecycle.ts): everything started here is stopped on exit,
// error and Ctrl-C.

cleanUpOnSignals();

/** Resident set size of a process and its children (the workers) in MB. */
function treeRss(parent: number): number {
  let total = memory(parent).rss;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (statFields(entry)[1] === parent) total += memory(Number(entry)).rss;
    } catch {
      // exited meanwhile
    }
  }
  return total;
}

/** The fields of /proc/PID/stat after the command name: [1] ppid, [11] utime, [12] stime, [13] cutime, [14] cstime. */
function statFields(pid: number | string): number[] {
  return readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /s, '')
    .split(' ')
    .map(Number);
}

/**
 * CPU seconds used by a process and its children (PostgreSQL's postmaster and backends, the service's
 * workers): its own, its live children's, and those of the children that have exited (its cutime and
 * cstime), so that a backend ending during a case does not take its time with it.
 */
function treeCpuSeconds(parent: number): number {
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

/**
 * Runs fn while writes of reports notify nothing (db/migrations/10_report_change_notify.sql's trigger
 * disabled): the service's report cache may go stale meanwhile, so only writes are driven then and the
 * processes are not read from again.
 */
async function withoutReportNotifications(url: string, fn: () => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('ALTER TABLE reports DISABLE TRIGGER reports_notify_changed');
    try {
      await fn();
    } finally {
      await client.query('ALTER TABLE reports ENABLE TRIGGER reports_notify_changed');
    }
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Cases.

/**
 * `workers`: the service again, with BENCH_WORKERS workers behind its port (WEB_CONCURRENCY).
 * The experiments, each on the compared operations: `floor`, the service's data layer behind bare
 * Express with no guarantee around it (scripts/bench/floor.ts: what any change on the Node side could
 * at best reach); `capped`, the service with a V8 heap ceiling (HEAP_CAP_ARGS: what holding its RSS
 * under the budget costs); `unnotified`, the service's writes while report writes do not notify
 * (withoutReportNotifications: what keeping the report cache correct across processes costs writes).
 */
type Target = 'bare' | 'service' | 'straightforward' | 'workers' | 'floor' | 'capped' | 'unnotified';

/** The node options of the `capped` experiment, added to those of `npm run start:production`. */
const HEAP_CAP_ARGS = ['--max-old-space-size=512'];

interface Case {
  name: string;
  requests: autocannon.Request[];
  headers?: Record<string, string>;
  /** Also driven against the straightforward implementation, right before or after the service. */
  compared?: boolean;
}

interface Row {
  case: string;
  target: Target;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Requests/s as a share of bare Express's (the mean of its runs at the start and at the end). */
  ofBare: number | null;
  errors: number;
  requests: number;
  /** Highest RSS sampled during the case, in MB. */
  peakRssMb: number;
  /** CPU used during the case, in percent of one core: the process driven and PostgreSQL. */
  serverCpuPct: number;
  postgresCpuPct: number;
}

async function drive(url: string, c: Case, duration: number): Promise<autocannon.Result> {
  return autocannon({
    url,
    connections: CONNECTIONS,
    duration,
    headers: c.headers,
    requests: c.requests,
  });
}

function reportBody(restId: string, inspectorEmail: string): string {
  return JSON.stringify(benchReport(restId, inspectorEmail));
}

/** CPU time per request in microseconds: steadier than requests/s on a machine shared with other work. */
const perRequest = (cpuPct: number, rps: number) => (rps > 0 ? ((cpuPct / 100 / rps) * 1e6).toFixed(0) : '');

function table(rows: Row[]): string {
  const header = [
    'case',
    'target',
    'req/s',
    'p50 ms',
    'p99 ms',
    'of bare',
    'errors',
    'requests',
    'peak RSS MB',
    'CPU% node',
    'CPU% pg',
    'node µs/req',
    'pg µs/req',
  ];
  return formatTable(
    header,
    rows.map((r) => [
      r.case,
      r.target,
      r.requestsPerSec.toFixed(0),
      r.p50Ms.toFixed(1),
      r.p99Ms.toFixed(1),
      r.ofBare === null ? '' : r.ofBare.toFixed(2),
      String(r.errors),
      String(r.requests),
      r.peakRssMb.toFixed(0),
      r.serverCpuPct.toFixed(0),
      r.postgresCpuPct.toFixed(0),
      perRequest(r.serverCpuPct, r.requestsPerSec),
      perRequest(r.postgresCpuPct, r.requestsPerSec),
    ]),
  );
}

/** The four operations issue 14 sets targets for, with the share of bare Express each must reach. */
const COMPARED = [
  { label: 'get', case: 'GET /reports/{id}', bareGoal: 0.4 },
  { label: 'list', case: 'GET /reports?limit=20 (1M)', bareGoal: 0.3 },
  { label: 'create', case: 'POST /reports/new (create)', bareGoal: 0.3 },
  { label: 'update', case: 'POST /reports/new (update)', bareGoal: undefined },
];
const TIMES_STRAIGHTFORWARD = 2.5;
const RSS_BUDGET_MB = 150;

async function main(): Promise<void> {
  const started = Date.now();
  const { database, dir: tempDir } = await startBenchDatabase('intake-bench-pg-');

  const seeder = new pg.Client({ connectionString: database.url });
  await seeder.connect();
  await seeder.query('SET synchronous_commit = off');
  console.log(`seeding ${SMALL} + ${LARGE} reports, then the straightforward implementation's copy of them`);
  const small = await seedCompany(seeder, 'Small', SMALL);
  const large = await seedCompany(seeder, 'Large', LARGE);
  await seeder.query('VACUUM ANALYZE');
  await createStraightforwardSchema(seeder);
  await seeder.end();
  console.log(`seeded in ${((Date.now() - started) / 1000).toFixed(0)} s`);

  const servicePort = await freePort();
  const serviceUrl = `http://127.0.0.1:${servicePort}`;
  const cpuProfDir = env.BENCH_CPU_PROF ? path.resolve(env.BENCH_CPU_PROF) : undefined;
  const productionArgs = buildProduction();
  /** The service's environment in the bench, listening on port. */
  const serviceEnv = (port: number, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    DATABASE_URL: database!.url,
    APP_TOKEN: `iat_${randomBytes(32).toString('base64url')}`,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    // One key drives each case at thousands of requests a second: a budget it never reaches, so the
    // limiter's cost is measured without its refusals.
    RATE_LIMIT_PER_MINUTE: '1000000',
    ...extra,
  });
  const service = startChild(
    'service',
    [...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : []), ...productionArgs],
    serviceEnv(servicePort),
  );
  const smallHeaders = { 'x-api-key': small.key };
  const largeHeaders = { 'x-api-key': large.key };
  await waitUntilUp(`${serviceUrl}/auth`, smallHeaders);
  const idle = memory(service.pid!);

  // Reference data from the running service: a report, the ids to read, the next-page link.
  const first = await fetch(`${serviceUrl}/reports?limit=20`, { headers: largeHeaders });
  const firstPage = (await first.json()) as { id: string }[];
  const nextPath = /<([^>]+)>;\s*rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
  if (!nextPath) throw new Error('the large company\'s first page has no Link: rel="next"');
  const ids = firstPage.map((r) => r.id);
  const sample = await fetch(`${serviceUrl}/reports/${ids[0]}`, { headers: largeHeaders });
  const sampleReport: unknown = await sample.json();

  const barePort = await freePort();
  const bare = startChild('bare', ['--import', 'tsx', 'scripts/bench/baseline.ts'], {
    PORT: String(barePort),
    BASELINE_BODY: JSON.stringify(sampleReport),
  });
  const straightforwardPort = await freePort();
  const straightforward = startChild(
    'straightforward',
    ['--import', 'tsx', 'scripts/bench/straightforward/server.ts'],
    { DATABASE_URL: database.url, PORT: String(straightforwardPort), LOG_LEVEL: 'warn' },
  );
  const workersPort = await freePort();
  const floorPort = await freePort();
  const floor = startChild('floor', ['--import', 'tsx', 'scripts/bench/floor.ts'], {
    DATABASE_URL: database.url,
    PORT: String(floorPort),
  });
  const cappedPort = await freePort();
  // The other service processes run only while driven: idle, each would still listen for (and take
  // PostgreSQL's work of delivering) every notification of the reports the one driven writes.
  const onDemand = {
    workers: () => startChild('workers', productionArgs, serviceEnv(workersPort, { WEB_CONCURRENCY: String(WORKERS) })),
    capped: () => startChild('capped', [...HEAP_CAP_ARGS, ...productionArgs], serviceEnv(cappedPort)),
  };
  const urls: Record<Target, string> = {
    bare: `http://127.0.0.1:${barePort}`,
    service: serviceUrl,
    straightforward: `http://127.0.0.1:${straightforwardPort}`,
    workers: `http://127.0.0.1:${workersPort}`,
    floor: `http://127.0.0.1:${floorPort}`,
    capped: `http://127.0.0.1:${cappedPort}`,
    unnotified: serviceUrl,
  };
  const pids: Record<Target, number> = {
    bare: bare.pid!,
    service: service.pid!,
    straightforward: straightforward.pid!,
    workers: 0,
    floor: floor.pid!,
    capped: 0,
    unnotified: service.pid!,
  };
  await waitUntilUp(`${urls.bare}/report`);
  await waitUntilUp(`${urls.straightforward}/auth`, smallHeaders);
  await waitUntilUp(`${urls.floor}/reports?limit=1`, smallHeaders);

  let counter = 0;
  const json = { 'content-type': 'application/json' };
  const bareCase: Case = { name: 'constant report', requests: [{ method: 'GET', path: '/report' }] };
  const allCases: Case[] = [
    { name: 'GET /auth', headers: smallHeaders, requests: [{ method: 'GET', path: '/auth' }] },
    {
      name: 'GET /reports/{id}',
      compared: true,
      headers: largeHeaders,
      requests: [
        { method: 'GET', setupRequest: (req) => ({ ...req, path: `/reports/${ids[counter++ % ids.length]}` }) },
      ],
    },
    {
      name: 'GET /reports?limit=20 (1k)',
      headers: smallHeaders,
      requests: [{ method: 'GET', path: '/reports?limit=20' }],
    },
    {
      name: 'GET /reports?limit=20 (1M)',
      compared: true,
      headers: largeHeaders,
      requests: [{ method: 'GET', path: '/reports?limit=20' }],
    },
    {
      name: 'GET /reports page 2 (1M)',
      headers: largeHeaders,
      requests: [{ method: 'GET', path: nextPath }],
    },
    {
      name: 'POST /reports/new (create)',
      compared: true,
      headers: { ...largeHeaders, ...json },
      requests: [
        {
          method: 'POST',
          setupRequest: (req) => ({
            ...req,
            path: '/reports/new',
            body: reportBody(`bench-new-${process.pid}-${++counter}`, large.inspectorEmail),
          }),
        },
      ],
    },
    {
      name: 'POST /reports/new (update)',
      compared: true,
      headers: { ...largeHeaders, ...json },
      requests: [
        {
          method: 'POST',
          // Existing restIds, spread so that concurrent updates rarely wait on the same row lock.
          setupRequest: (req) => ({
            ...req,
            path: '/reports/new',
            body: reportBody(`seed-${1 + ((++counter * 7919) % LARGE)}`, large.inspectorEmail),
          }),
        },
      ],
    },
  ];
  const cases = allCases.filter((c) => !ONLY || ONLY.some((o) => c.name.includes(o)));

  const postmaster = Number(readFileSync(path.join(tempDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const rows: Row[] = [];
  const run = async (c: Case, target: Target): Promise<void> => {
    const url = urls[target];
    const pid = pids[target];
    if (WARMUP > 0) await drive(url, c, WARMUP);
    let peak = treeRss(pid);
    const sampler = setInterval(() => (peak = Math.max(peak, treeRss(pid))), 200);
    const cpuBefore = { server: treeCpuSeconds(pid), postgres: treeCpuSeconds(postmaster), at: Date.now() };
    const result = await drive(url, c, DURATION);
    const elapsed = (Date.now() - cpuBefore.at) / 1000;
    const serverCpuPct = ((treeCpuSeconds(pid) - cpuBefore.server) / elapsed) * 100;
    const postgresCpuPct = ((treeCpuSeconds(postmaster) - cpuBefore.postgres) / elapsed) * 100;
    clearInterval(sampler);
    const row: Row = {
      case: c.name,
      target,
      requestsPerSec: result.requests.average,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      ofBare: null,
      errors: result.errors + result.timeouts + result.non2xx,
      requests: result.requests.total,
      peakRssMb: Math.max(peak, treeRss(pid)),
      serverCpuPct,
      postgresCpuPct,
    };
    rows.push(row);
    console.log(
      `${c.name} (${target}): ${row.requestsPerSec.toFixed(0)} req/s, p99 ${row.p99Ms} ms, errors ${row.errors}, ` +
        `CPU node ${serverCpuPct.toFixed(0)}%, pg ${postgresCpuPct.toFixed(0)}%`,
    );
  };

  /** High-water marks of the processes started for their runs, taken before each was stopped. */
  const stoppedHwm = new Map<Target, number>();
  const runStarted = async (c: Case, target: keyof typeof onDemand): Promise<void> => {
    const child = onDemand[target]();
    pids[target] = child.pid!;
    try {
      await waitUntilUp(`${urls[target]}/auth`, smallHeaders);
      await run(c, target);
      stoppedHwm.set(target, Math.max(stoppedHwm.get(target) ?? 0, memory(child.pid!).hwm));
    } finally {
      await stopChild(child);
    }
  };

  // Bare Express at the start and at the end: the mean is the yardstick, the spread shows the drift.
  // Compared cases alternate which of the two implementations goes first, so that neither always
  // runs on the warmer (or the more loaded) machine.
  await run(bareCase, 'bare');
  let serviceFirst = true;
  for (const c of cases) {
    const order: Target[] = !c.compared
      ? ['service']
      : serviceFirst
        ? ['service', 'straightforward']
        : ['straightforward', 'service'];
    if (c.compared) serviceFirst = !serviceFirst;
    for (const target of order) await run(c, target);
    // Right after the single process, so that the two see the same machine.
    if (WORKERS > 1) await runStarted(c, 'workers');
    if (!c.compared) continue;
    await run(c, 'floor');
    await runStarted(c, 'capped');
    if (c.name.startsWith('POST')) await withoutReportNotifications(database.url, () => run(c, 'unnotified'));
  }
  await run(bareCase, 'bare');
  console.log('write shapes: PostgreSQL CPU per report written, straight through pg');
  const writeShapes = await measureWriteShapes(database.url, large, () => treeCpuSeconds(postmaster));

  const bareRows = rows.filter((r) => r.target === 'bare');
  const bareRps = bareRows.reduce((sum, r) => sum + r.requestsPerSec, 0) / bareRows.length;
  for (const row of rows) row.ofBare = bareRps > 0 ? row.requestsPerSec / bareRps : null;

  // The high-water mark of one process, or the highest sum over the workers sampled during a case.
  const peakRssMb = Object.fromEntries(
    (Object.keys(pids) as Target[]).map((t) => [
      t,
      Math.max(
        stoppedHwm.get(t) ?? (t in onDemand ? 0 : memory(pids[t]).hwm),
        ...rows.filter((r) => r.target === t).map((r) => r.peakRssMb),
      ),
    ]),
  ) as Record<Target, number>;
  const rowOf = (target: Target, name: string) => rows.find((r) => r.target === target && r.case === name);
  const comparison = COMPARED.filter((c) => rowOf('service', c.case) && rowOf('straightforward', c.case)).map((c) => {
    const service = rowOf('service', c.case)!;
    const plain = rowOf('straightforward', c.case)!;
    return {
      ...c,
      service: service.requestsPerSec,
      straightforward: plain.requestsPerSec,
      timesStraightforward: plain.requestsPerSec > 0 ? service.requestsPerSec / plain.requestsPerSec : 0,
      ofBare: service.ofBare ?? 0,
      errors: service.errors + plain.errors,
    };
  });
  // The experiments, operation by operation: the floor against the targets, and what the heap ceiling
  // and the notifications cost, as requests/s over the service's in the same run.
  const experiments = COMPARED.filter((c) => rowOf('service', c.case)).map((c) => {
    const service = rowOf('service', c.case)!;
    const plain = rowOf('straightforward', c.case);
    const floorRow = rowOf('floor', c.case);
    const overService = (row?: Row) => (row ? row.requestsPerSec / service.requestsPerSec : null);
    // The most the process could answer with a whole core to itself and a database that cost nothing:
    // its own CPU per request (a process already using a core or more is at its ceiling).
    const nodeBound = (service.requestsPerSec * 100) / Math.min(Math.max(service.serverCpuPct, 1), 100);
    return {
      label: c.label,
      floor: floorRow?.requestsPerSec ?? null,
      floorTimesStraightforward: floorRow && plain ? floorRow.requestsPerSec / plain.requestsPerSec : null,
      floorOfBare: floorRow?.ofBare ?? null,
      cappedOfService: overService(rowOf('capped', c.case)),
      unnotifiedOfService: overService(rowOf('unnotified', c.case)),
      nodeBound,
      nodeBoundTimesStraightforward: plain ? nodeBound / plain.requestsPerSec : null,
      nodeBoundOfBare: bareRps > 0 ? nodeBound / bareRps : null,
    };
  });
  const listSmall = rowOf('service', 'GET /reports?limit=20 (1k)')?.p99Ms;
  const listLarge = rowOf('service', 'GET /reports?limit=20 (1M)')?.p99Ms;
  const targets: Record<string, boolean> = {};
  for (const c of comparison) {
    targets[`${c.label} >= ${TIMES_STRAIGHTFORWARD} x straightforward`] =
      c.timesStraightforward >= TIMES_STRAIGHTFORWARD;
  }
  for (const c of comparison) {
    if (c.bareGoal !== undefined) targets[`${c.label} >= ${c.bareGoal} x bare Express`] = c.ofBare >= c.bareGoal;
  }
  if (listSmall !== undefined && listLarge !== undefined)
    targets['list p99 1M <= 1.5 x 1k'] = listLarge <= 1.5 * listSmall;
  targets[`service peak RSS <= ${RSS_BUDGET_MB} MB`] = peakRssMb.service <= RSS_BUDGET_MB;
  targets['zero errors'] = rows.every((r) => r.errors === 0);

  await Promise.all([bare, straightforward, service, floor].map(stopChild));
  // Requests/s with the workers over the single process, case by case.
  const scaleOut = Object.fromEntries(
    cases.flatMap((c) => {
      const [one, many] = [rowOf('service', c.name), rowOf('workers', c.name)];
      return one && many && one.requestsPerSec > 0 ? [[c.name, many.requestsPerSec / one.requestsPerSec]] : [];
    }),
  );

  const report = {
    date: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      memoryGb: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      loadAverage: os.loadavg(),
    },
    settings: {
      durationSec: DURATION,
      warmupSec: WARMUP,
      connections: CONNECTIONS,
      smallCompanyReports: SMALL,
      largeCompanyReports: LARGE,
      validateResponses: env.VALIDATE_RESPONSES ?? 'default',
      databasePoolSize: env.DATABASE_POOL_MAX ?? 'default',
    },
    serviceIdleRssMb: idle.rss,
    peakRssMb,
    bareRequestsPerSec: bareRps,
    comparison,
    experiments,
    writeShapes,
    workers: WORKERS,
    scaleOut,
    results: rows,
    listP99Ratio1Mto1k: listSmall && listLarge ? listLarge / listSmall : null,
    targets,
    totalSec: (Date.now() - started) / 1000,
  };
  await writeFile(OUT, `${JSON.stringify(report, null, 2)}\n`);

  console.log('');
  console.log(table(rows));
  console.log('');
  console.log(
    formatTable(
      ['operation', 'service req/s', 'straightforward req/s', 'bare req/s', 'x straightforward', 'of bare', 'errors'],
      comparison.map((c) => [
        c.label,
        c.service.toFixed(0),
        c.straightforward.toFixed(0),
        bareRps.toFixed(0),
        c.timesStraightforward.toFixed(2),
        c.ofBare.toFixed(2),
        String(c.errors),
      ]),
    ),
  );
  console.log('');
  console.log(
    `peak RSS: service ${peakRssMb.service.toFixed(0)} MB (idle ${idle.rss.toFixed(0)} MB), ` +
      `straightforward ${peakRssMb.straightforward.toFixed(0)} MB, bare Express ${peakRssMb.bare.toFixed(0)} MB; ` +
      `bare Express ${bareRows.map((r) => r.requestsPerSec.toFixed(0)).join(' -> ')} req/s (start -> end); ` +
      `list p99 1M/1k: ${report.listP99Ratio1Mto1k?.toFixed(2) ?? 'n/a'}`,
  );
  for (const [target, met] of Object.entries(targets)) console.log(`  ${met ? 'met    ' : 'MISSED '} ${target}`);
  const fixed = (n: number | null, digits = 2) => (n === null ? '' : n.toFixed(digits));
  console.log('');
  console.log(
    `experiments: floor = the data layer on bare Express, no guarantees (scripts/bench/floor.ts); ` +
      `capped = the service with ${HEAP_CAP_ARGS.join(' ')} (peak RSS ${peakRssMb.capped.toFixed(0)} MB); ` +
      `unnotified = the service while report writes do not notify (what the report cache costs writes); ` +
      `node-bound = the service's requests/s with a core to itself and a free database (its own CPU per request)`,
  );
  console.log(
    formatTable(
      [
        'operation',
        'floor req/s',
        'floor x straightforward',
        'floor of bare',
        'capped / service',
        'unnotified / service',
        'node-bound req/s',
        'node-bound x straightforward',
        'node-bound of bare',
      ],
      experiments.map((e) => [
        e.label,
        fixed(e.floor, 0),
        fixed(e.floorTimesStraightforward),
        fixed(e.floorOfBare),
        fixed(e.cappedOfService),
        fixed(e.unnotifiedOfService),
        fixed(e.nodeBound, 0),
        fixed(e.nodeBoundTimesStraightforward),
        fixed(e.nodeBoundOfBare),
      ]),
    ),
  );
  console.log(
    'write shapes (PostgreSQL CPU per report written): ' +
      writeShapes
        .map((w) => `${w.shape} ${w.postgresUsPerRow.toFixed(0)} µs (${w.rowsPerSec.toFixed(0)} reports/s)`)
        .join(', '),
  );
  if (Object.keys(scaleOut).length > 0) {
    console.log(
      `${WORKERS} workers (peak RSS ${peakRssMb.workers.toFixed(0)} MB in all) / 1 process, requests/s: ` +
        Object.entries(scaleOut)
          .map(([name, ratio]) => `${name} ${ratio.toFixed(2)}`)
          .join(', '),
    );
  }
  console.log(
    `machine: ${report.machine.cpus} × ${report.machine.cpuModel}, Node ${process.version}, ` +
      `load ${report.machine.loadAverage.map((l) => l.toFixed(1)).join(' ')}; ` +
      `results in ${path.relative(process.cwd(), OUT) || OUT}; ${report.totalSec.toFixed(0)} s in all`,
  );
  if (cpuProfDir && existsSync(cpuProfDir)) console.log(`CPU profile written to ${cpuProfDir}`);
}

runBench(main);
