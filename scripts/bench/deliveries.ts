// `npm run bench:deliveries`: how fast one service process delivers webhooks (publishes/s, due
// events drained/s), and whether one company's failing receiver holds back another company's publishes.
// Environment (optional): BENCH_DELIVERIES_PUBLISHES, BENCH_DELIVERIES_EVENTS, BENCH_DELIVERIES_DURATION (s).

import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { HttpsReceiver } from '../../test/support/https-receiver.js';
import { appCall, startServiceTrusting } from './fairness-setup.js';
import { formatTable, machine, onCleanUp, runBench } from './lifecycle.js';
import { runScript, startBenchDatabase, treeCpuSeconds } from './lifecycle.js';
import { seedCompany, type SeededCompany } from './seed.js';
import { latency, MAX_RATIO, type SteadyConfig, type SteadyResult } from './steady-client.js';

const PUBLISHES = Number(process.env.BENCH_DELIVERIES_PUBLISHES ?? 2_000);
const EVENTS = Number(process.env.BENCH_DELIVERIES_EVENTS ?? 10_000);
const DURATION = Number(process.env.BENCH_DELIVERIES_DURATION ?? 15);
const COMPANIES = 4;
/** Publishes of one company at once: its share of the process's delivery places (WEBHOOK_MAX_IN_FLIGHT_PER_COMPANY). */
const SHARE = 4;
const B_RATE = 20;

type Company = SeededCompany & { reportIds: string[] };

interface Stage {
  cpu: () => { service: number; postgres: number };
  baseUrl: string;
  appToken: string;
  db: pg.Client;
  receiver: HttpsReceiver;
}

async function company(stage: Stage, name: string, reports: number): Promise<Company> {
  const seeded = await seedCompany(stage.db, name, reports);
  const ids = 'SELECT id FROM reports WHERE company_id = $1 ORDER BY id';
  const { rows } = await stage.db.query<{ id: string }>(ids, [seeded.companyId]);
  await appCall(stage, 'PUT', `/companies/${seeded.companyId}/webhook`, { url: stage.receiver.url(`/${name}`) });
  return { ...seeded, reportIds: rows.map((r) => r.id) };
}

/** Publishes the reports one after the other, each answered once its webhook is delivered. */
async function publishEach(stage: Stage, c: Company, ids: string[]): Promise<void> {
  for (const id of ids) {
    const body = {
      publishedUrl: `https://reports.example.com/r/${id}`,
      notifyIntegration: true,
      whenDeliveryFails: 'fail',
    };
    const { webhook } = (await appCall(stage, 'POST', `/companies/${c.companyId}/reports/${id}/publish`, body)) as {
      webhook?: { outcome: string };
    };
    if (webhook?.outcome !== 'sent') throw new Error(`publish of ${id}: webhook ${JSON.stringify(webhook)}`);
  }
}

/** Records `perCompany` pending events of each company, due now, each with the payload of one of its published reports. */
async function recordDueEvents(stage: Stage, companies: Company[], perCompany: number): Promise<void> {
  await stage.db.query(
    `INSERT INTO webhook_events (company_id, id, report_id, integration_id, payload, status, next_attempt_at)
     SELECT e.company_id, 'msg_bench_' || e.company_id || '_' || g, e.report_id, e.integration_id, e.payload,
            'pending', clock_timestamp()
       FROM (SELECT DISTINCT ON (company_id) company_id, report_id, integration_id, payload FROM webhook_events
              WHERE company_id = ANY($1::uuid[])) e, generate_series(1, $2::int) g`,
    [companies.map((c) => c.companyId), perCompany],
  );
}

async function drained(stage: Stage, companies: Company[]): Promise<void> {
  for (const started = performance.now(); ;) {
    const { rows } = await stage.db.query<{ pending: number; undelivered: number }>(
      `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending,
              count(*) FILTER (WHERE status <> 'delivered')::int AS undelivered
         FROM webhook_events WHERE company_id = ANY($1::uuid[])`,
      [companies.map((c) => c.companyId)],
    );
    if (rows[0]!.pending === 0) {
      if (rows[0]!.undelivered > 0) throw new Error(`${rows[0]!.undelivered} events not delivered`);
      return;
    }
    if (performance.now() - started > 300_000) throw new Error('the drain took more than 5 minutes');
    await sleep(100);
  }
}

/** How fast run() does `count` things, and the CPU each takes in the service and in PostgreSQL. */
async function measured(stage: Stage, count: number, run: () => Promise<void>) {
  const [started, before] = [performance.now(), stage.cpu()];
  await run();
  const [seconds, after] = [(performance.now() - started) / 1000, stage.cpu()];
  const each = (key: 'service' | 'postgres') => (((after[key] - before[key]) * 1000) / count).toFixed(2);
  return { perSec: count / seconds, cpuEach: `${each('service')} / ${each('postgres')}` };
}

/** B's open-loop publishes for DURATION s, from a process of its own (so that the receiver here does not delay them). */
async function steady(stage: Stage, b: Company, reportIds: string[]): Promise<SteadyResult> {
  const { baseUrl, appToken } = stage;
  const config: SteadyConfig = {
    ...{ baseUrl, key: b.key, ids: b.reportIds, inspectorEmail: b.inspectorEmail, restIdPrefix: 'b' },
    ...{ rate: B_RATE, durationSec: DURATION, publishes: { companyId: b.companyId, reportIds, appToken } },
  };
  const env = { STEADY_CONFIG: JSON.stringify(config) };
  const { result } = await runScript<SteadyResult>('steady-client.ts', env, async () => 0);
  const failed = result.samples.filter((s) => s.status !== 200);
  if (failed.length > 0) throw new Error(`B: ${failed.length} publishes not 200, e.g. ${JSON.stringify(failed[0])}`);
  return result;
}

async function setUp(): Promise<Stage> {
  const database = await startBenchDatabase('intake-deliveries-pg-');
  const receiver = await HttpsReceiver.start();
  onCleanUp(() => receiver.stop());
  const service = await startServiceTrusting(database, receiver.ca, { WEBHOOK_WORKER: 'true' });
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  onCleanUp(() => db.end());
  const cpu = () => ({ service: treeCpuSeconds(service.pid), postgres: treeCpuSeconds(database.postmaster) });
  return { cpu, baseUrl: service.url, appToken: service.appToken, db, receiver };
}

async function main(): Promise<void> {
  const stage = await setUp();
  const perCompany = Math.ceil(PUBLISHES / COMPANIES);
  const publishers: Company[] = [];
  for (let i = 1; i <= COMPANIES; i++) publishers.push(await company(stage, `p${i}`, perCompany));
  const a = await company(stage, 'a', 1);
  const b = await company(stage, 'b', 2 * DURATION * B_RATE + 1);

  console.log(`1. ${perCompany * COMPANIES} synchronous publishes, ${COMPANIES * SHARE} at once`);
  await publishEach(stage, a, a.reportIds); // the first publish of the process, not counted
  const publishes = await measured(stage, perCompany * COMPANIES, async () => {
    const inTurn = (c: Company, k: number) => c.reportIds.filter((_, n) => n % SHARE === k);
    await Promise.all(
      publishers.flatMap((c) => [...Array(SHARE).keys()].map((k) => publishEach(stage, c, inTurn(c, k)))),
    );
  });

  console.log(`2. ${EVENTS} due events drained by the service's worker`);
  await recordDueEvents(stage, publishers, Math.ceil(EVENTS / COMPANIES));
  const drain = await measured(stage, Math.ceil(EVENTS / COMPANIES) * COMPANIES, () => drained(stage, publishers));

  console.log(`3. B publishing ${B_RATE}/s for ${DURATION} s alone, then during A's retry storm`);
  const alone = latency((await steady(stage, b, b.reportIds.slice(1, 1 + DURATION * B_RATE))).samples);
  stage.receiver.on('/a', { status: 500 });
  await recordDueEvents(stage, [a], EVENTS);
  for (let waited = 0; stage.receiver.at('/a').length < 2 * SHARE; waited += 50) {
    if (waited > 10_000) throw new Error("the worker has not started A's attempts within 10 s");
    await sleep(50);
  }
  const aBefore = stage.receiver.at('/a').length;
  const storm = latency((await steady(stage, b, b.reportIds.slice(1 + DURATION * B_RATE))).samples);
  const aAttempts = (stage.receiver.at('/a').length - aBefore) / DURATION;

  const [f, ratio, drainOver] = [
    (n: number) => n.toFixed(1),
    storm.p99Ms / alone.p99Ms,
    drain.perSec / publishes.perSec,
  ];
  const verdict = (met: boolean, goal: string) => `${goal}: ${met ? 'met' : 'missed'}`;
  const lines = [
    ['synchronous publishes/s (fail mode, 16 at once)', f(publishes.perSec), ''],
    ['  CPU ms per publish: service / PostgreSQL', publishes.cpuEach, ''],
    ['background drain, events/s', f(drain.perSec), ''],
    ['  CPU ms per event: service / PostgreSQL', drain.cpuEach, ''],
    ['drain / publishes', drainOver.toFixed(2), verdict(drainOver >= 1, '≥ 1')],
    ["B's publish p50 ms, alone / storm", `${f(alone.p50Ms)} / ${f(storm.p50Ms)}`, ''],
    ["B's publish p99 ms, alone / storm", `${f(alone.p99Ms)} / ${f(storm.p99Ms)}`, ''],
    ["B's p99 storm / alone", ratio.toFixed(2), verdict(ratio <= MAX_RATIO, `≤ ${MAX_RATIO}`)],
    ["A's failed attempts/s during the storm", f(aAttempts), ''],
  ];
  console.log(`\n${formatTable(['measure', 'figure', 'goal'], lines)}`);
  const errors = stage.receiver.contractErrors.length;
  console.log(`webhooks not matching the contract: ${errors}; machine: ${machine()}`);
}

runBench(main);
