// `npm run bench`: the service's hot paths under load (production build), side by side with two
// yardsticks, the straightforward implementation (scripts/bench/straightforward/) and, for creates, the
// newcomer's (scripts/bench/newcomer/), and a bare Express answering a constant report (baseline.ts), on
// a fresh PostgreSQL (lifecycle.ts: embedded, or with BENCH_POSTGRES=stock Debian's) with a company of
// 1,000 reports and one of BENCH_LARGE. Each case is driven with autocannon for a fixed time; prints the
// comparison (hot-path-figures.ts), the targets met or missed and, on the stock server, any statement
// compiled with JIT; writes every row as JSON.
// Environment (optional): BENCH_DURATION (seconds per case, default 8), BENCH_WARMUP (seconds, default
// 2), BENCH_CONNECTIONS (default 16), BENCH_LARGE (default 1000000), BENCH_ONLY (comma-separated parts
// of case names), BENCH_OUT (default bench-results.json), BENCH_ROUNDS (default 1: rounds of each
// compared case, the implementations alternating; the figures are the rounds' medians).

import autocannon from 'autocannon';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { buildProduction, buildYardstick } from '../production-build.js';
import { jitStatements, printJitStatements, resetStatements } from './jit-statements.js';
import { CREATE, figures, KEYED, print, type Row, type Target } from './hot-path-figures.js';
import { machine, peakRssMb, ROOT, runBench, startBenchDatabase, startServer, treeCpuSeconds } from './lifecycle.js';
import { benchReport, seedCompany } from './seed.js';
import { createStraightforwardSchema } from './straightforward/schema.js';

const env = process.env;
const DURATION = Number(env.BENCH_DURATION ?? 8);
const WARMUP = Number(env.BENCH_WARMUP ?? 2);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 16);
const LARGE = Number(env.BENCH_LARGE ?? 1_000_000);
const OUT = path.resolve(ROOT, env.BENCH_OUT ?? 'bench-results.json');
const ONLY = env.BENCH_ONLY?.split(',').map((s) => s.trim());
const ROUNDS = Number(env.BENCH_ROUNDS ?? 1);

type Headers = Record<string, string>;

/**
 * A case; `compared`: also driven against the straightforward implementation, right before or after the
 * service, and with `newcomer` against the second yardstick too; `keyed`: the same requests with an
 * Idempotency-Key, driven against the service in the same rounds.
 */
type Case = {
  name: string;
  requests: autocannon.Request[];
  headers?: Headers;
  compared?: boolean;
  newcomer?: boolean;
  keyed?: Case;
};

let counter = 0;

/** A case of POST /reports/new: each request's body (and headers) as `next` makes them. */
function postCase(name: string, headers: Headers, next: () => [object, Headers?]): Case {
  const setupRequest: NonNullable<autocannon.Request['setupRequest']> = (req) => {
    const [body, extra] = next();
    return { ...req, path: '/reports/new', body: JSON.stringify(body), headers: { ...req.headers, ...extra } };
  };
  return { name, compared: true, headers, requests: [{ method: 'POST', setupRequest }] };
}

/**
 * The cases: reads go to the large company but for the small company's first page (ids: the large
 * company's first page, nextPath: its second); writes create reports in the large company or update its seeded ones.
 */
function buildCases(small: Headers, large: Headers, inspectorEmail: string, ids: string[], nextPath: string): Case[] {
  const json = { ...large, 'content-type': 'application/json' };
  const report = (restId: string) => benchReport(restId, inspectorEmail);
  const byId: autocannon.Request = {
    setupRequest: (req) => ({ ...req, path: `/reports/${ids[counter++ % ids.length]}` }),
  };
  const get = (name: string, headers: Headers, path: string, compared = false): Case => ({
    ...{ name, headers, compared },
    requests: [{ method: 'GET', ...(path === '/reports/{id}' ? byId : { path }) }],
  });
  return [
    get('GET /auth', small, '/auth'),
    get('GET /reports/{id}', large, '/reports/{id}', true),
    get('GET /reports?limit=20 (1k)', small, '/reports?limit=20'),
    get('GET /reports?limit=20 (1M)', large, '/reports?limit=20', true),
    get('GET /reports page 2 (1M)', large, nextPath),
    {
      ...postCase(CREATE, json, () => [report(`bench-new-${process.pid}-${++counter}`)]),
      newcomer: true,
      // A retry-safe partner's creates, each with a key of its own (the yardstick has no keys).
      keyed: postCase(KEYED, json, () => {
        const restId = `bench-idem-${process.pid}-${++counter}`;
        return [report(restId), { 'idempotency-key': restId }];
      }),
    },
    // Existing restIds, spread so that concurrent updates rarely wait on the same row lock.
    postCase('POST /reports/new (update)', json, () => [report(`seed-${1 + ((++counter * 7919) % LARGE)}`)]),
    // A partner's sync sending every edit of one inspection from parallel workers: one report, many edits.
    postCase('POST /reports/new (one-report burst)', json, () => [
      { ...report(`bench-burst-${process.pid}`), notes: `Edit ${++counter} of the inspection.` },
    ]),
  ];
}

async function seed(url: string) {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  await db.query('SET synchronous_commit = off');
  console.log(`seeding 1000 + ${LARGE} reports and the straightforward implementation's copy of them`);
  const small = await seedCompany(db, 'Small', 1_000);
  const large = await seedCompany(db, 'Large', LARGE);
  await db.query('VACUUM ANALYZE');
  await createStraightforwardSchema(db);
  await db.end();
  return { small, large };
}

async function run(c: Case, target: Target, url: string, pid: number, postmaster: number): Promise<Row> {
  const drive = (duration: number) =>
    autocannon({ url, connections: CONNECTIONS, duration, headers: c.headers, requests: c.requests });
  if (WARMUP > 0) await drive(WARMUP);
  const before = [treeCpuSeconds(pid), treeCpuSeconds(postmaster)];
  const result = await drive(DURATION);
  // CPU time per request in µs, of the process driven and of PostgreSQL.
  const perRequest = (now: number, then: number) => ((now - then) / result.requests.total) * 1e6;
  const row: Row = {
    ...{ case: c.name, target, requestsPerSec: result.requests.average, p50Ms: result.latency.p50 },
    ...{ p99Ms: result.latency.p99, errors: result.errors + result.timeouts + result.non2xx },
    nodeUs: perRequest(treeCpuSeconds(pid), before[0]!),
    postgresUs: perRequest(treeCpuSeconds(postmaster), before[1]!),
  };
  console.log(
    `${c.name} (${target}): ${row.requestsPerSec.toFixed(0)} req/s, p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms, ` +
      `errors ${row.errors}, CPU µs/request ${row.nodeUs.toFixed(0)} node, ${row.postgresUs.toFixed(0)} PostgreSQL`,
  );
  return row;
}

/**
 * One round of a case: the service, the yardstick when compared, the keyed requests on the service,
 * starting at `turn`, so that in successive rounds none always meets the warmer machine.
 */
function roundOf(c: Case, turn: number): [Case, Target][] {
  const runs: [Case, Target][] = [[c, 'service']];
  if (c.compared) runs.push([c, 'straightforward']);
  if (c.newcomer) runs.push([c, 'newcomer']);
  if (c.keyed) runs.push([c.keyed, 'service']);
  return [...runs.slice(turn % runs.length), ...runs.slice(0, turn % runs.length)];
}

async function main(): Promise<void> {
  const database = await startBenchDatabase('intake-bench-pg-');
  const { small, large } = await seed(database.url);
  const stock = database.server.kind === 'stock';
  if (stock) await resetStatements(database.url);
  const [smallHeaders, largeHeaders] = [{ 'x-api-key': small.key }, { 'x-api-key': large.key }];
  const service = await startServer('service', buildProduction(), database.url);
  const first = await fetch(`${service.url}/reports?limit=20`, { headers: largeHeaders });
  const ids = ((await first.json()) as { id: string }[]).map((r) => r.id);
  const nextPath = /<([^>]+)>;\s*rel="next"/.exec(first.headers.get('link') ?? '')?.[1] ?? '';
  const sample: unknown = await (await fetch(`${service.url}/reports/${ids[0]}`, { headers: largeHeaders })).json();
  const tsx = (script: string) => ['--import', 'tsx', `scripts/bench/${script}`];
  const bareEnv = { BASELINE_BODY: JSON.stringify(sample) };
  const processes = {
    service,
    bare: await startServer('bare', tsx('baseline.ts'), database.url, bareEnv, '/report'),
    straightforward: await startServer('straightforward', buildYardstick('straightforward'), database.url, {}, '/auth'),
    newcomer: await startServer('newcomer', buildYardstick('newcomer'), database.url, {}, '/auth'),
  };
  const cases = buildCases(smallHeaders, largeHeaders, large.inspectorEmail, ids, nextPath);
  const drive = (c: Case, t: Target) => run(c, t, processes[t].url, processes[t].pid, database.postmaster);

  const bareCase: Case = { name: 'constant report', requests: [{ method: 'GET', path: '/report' }] };
  const rows = [await drive(bareCase, 'bare')];
  let turn = 0;
  for (const c of cases.filter((c) => !ONLY || ONLY.some((o) => c.name.includes(o)))) {
    for (let round = 0; round < (c.compared ? ROUNDS : 1); round++) {
      for (const [driven, target] of roundOf(c, c.compared ? turn++ : 0)) rows.push(await drive(driven, target));
    }
  }
  rows.push(await drive(bareCase, 'bare'));
  const result = figures(rows, peakRssMb(service.pid));
  const jit = stock ? await jitStatements(database.url) : undefined;
  const report = { date: new Date().toISOString(), machine: machine(), postgres: database.server, ...result, jit };
  await writeFile(OUT, `${JSON.stringify({ ...report, rows }, null, 2)}\n`);
  print(result, database.server, OUT);
  if (jit) printJitStatements(jit);
}

runBench(main);
