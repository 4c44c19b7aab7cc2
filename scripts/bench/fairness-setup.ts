/**
 * The stage of `npm run bench:fairness`: a fresh PostgreSQL, two local HTTPS webhook receivers (one
 * answering after 8 s, one at once), the production build of the service trusting and allowed to
 * reach them, and the companies: B (a few ordinary reports, its webhook on the fast receiver, one
 * report created through the API to publish), A (1,000 ordinary reports, its webhook on the slow
 * receiver) and A's second company "A max" (50 inspectors and 40 reports of the maximal size the
 * contract allows, see maximal-report.ts).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../../src/local/index.js';
import { HttpsReceiver } from '../../test/support/https-receiver.js';
import { benchReport, seedCompany, type SeededCompany } from './seed.js';
import { localhostCertificate } from '../localhost-certificate.js';
import { buildProduction } from '../production-build.js';
import { onCleanUp, startBenchDatabase, startChild, waitUntilUp } from './lifecycle.js';
import { maximalInspectors, maximalReportBody } from './maximal-report.js';

export const SLOW_RECEIVER_MS = 8_000;
const MAXIMAL_REPORTS = 40;

export interface Stage {
  baseUrl: string;
  appToken: string;
  servicePid: number;
  databaseUrl: string;
  /** A: 1,000 ordinary reports (restIds seed-1 … seed-1000), its webhook answering after 8 s. */
  a: SeededCompany;
  /** A's second company: 40 maximal reports, and the 50 inspectors a maximal report names. */
  aMax: SeededCompany & { inspectorEmails: string[] };
  /** B: its report ids, and one report created through the API (so that publishing it notifies). */
  b: SeededCompany & { ids: string[]; publishReportId: string };
  receivers: { slow: HttpsReceiver; fast: HttpsReceiver };
}

async function startReceivers(dir: string): Promise<{ slow: HttpsReceiver; fast: HttpsReceiver; caFile: string }> {
  // One certificate for both: two self-signed ones with the same name (localhost) cannot both be trusted.
  const certificate = await localhostCertificate();
  const slow = await HttpsReceiver.start(certificate);
  onCleanUp(() => slow.stop());
  const fast = await HttpsReceiver.start(certificate);
  onCleanUp(() => fast.stop());
  slow.on('/a', { status: 204, waitFor: () => sleep(SLOW_RECEIVER_MS) });
  const caFile = path.join(dir, 'receivers-ca.pem');
  await writeFile(caFile, certificate.cert);
  return { slow, fast, caFile };
}

/** A call to the service's application API; throws unless it answers 2xx. */
export async function appCall(
  stage: Pick<Stage, 'baseUrl' | 'appToken'>,
  method: string,
  route: string,
  body?: unknown,
) {
  const res = await fetch(`${stage.baseUrl}/internal${route}`, {
    method,
    headers: { authorization: `Bearer ${stage.appToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} /internal${route}: ${res.status} ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : {}) as Record<string, string>;
}

/** Times a set-up create refused with 429 is sent again (after its Retry-After), as a partner would. */
const SETUP_RETRIES = 5;

/**
 * A partner create; throws unless it answers 200 (after at most SETUP_RETRIES retries of a 429: the
 * first requests of a process, under a CPU profile, can wait out the company's admission); answers the
 * report's id.
 */
export async function createReport(baseUrl: string, key: string, body: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${baseUrl}/reports/new`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body,
    });
    const text = await res.text();
    if (res.status === 429 && attempt < SETUP_RETRIES) {
      await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
      continue;
    }
    if (res.status !== 200) throw new Error(`POST /reports/new: ${res.status} ${text.slice(0, 300)}`);
    return (JSON.parse(text) as { id: string }).id;
  }
}

/** A's second company through the application API: 50 inspectors, a key, 40 maximal reports. */
async function createMaximalCompany(stage: Pick<Stage, 'baseUrl' | 'appToken'>): Promise<Stage['aMax']> {
  const company = await appCall(stage, 'POST', '/companies', { name: 'A max' });
  const inspectors = maximalInspectors();
  for (const inspector of inspectors) await appCall(stage, 'POST', `/companies/${company.id}/users`, inspector);
  const { key } = await appCall(stage, 'POST', `/companies/${company.id}/api-keys`);
  const inspectorEmails = inspectors.map((i) => i.email);
  for (let i = 1; i <= MAXIMAL_REPORTS; i++) {
    await createReport(stage.baseUrl, key!, maximalReportBody(`max-${i}`, inspectorEmails));
  }
  return { companyId: company.id!, key: key!, inspectorEmail: inspectorEmails[0]!, inspectorEmails };
}

async function seed(databaseUrl: string): Promise<{ a: SeededCompany; b: SeededCompany }> {
  const seeder = new pg.Client({ connectionString: databaseUrl });
  await seeder.connect();
  try {
    const a = await seedCompany(seeder, 'A', 1_000);
    const b = await seedCompany(seeder, 'B', 20);
    await seeder.query('VACUUM ANALYZE');
    return { a, b };
  } finally {
    await seeder.end();
  }
}

async function startService(databaseUrl: string, appToken: string, caFile: string) {
  const port = await freePort();
  const profile = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`]
    : [];
  const service = startChild(
    'service',
    [...profile, ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []), ...buildProduction()],
    {
      DATABASE_URL: databaseUrl,
      APP_TOKEN: appToken,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
      NODE_EXTRA_CA_CERTS: caFile,
      // No request budget unless one is asked for: A's floods must reach the service, so that what keeps
      // B's latency is each company's share, not A's requests refused at the door.
      RATE_LIMIT_PER_MINUTE: process.env.RATE_LIMIT_PER_MINUTE ?? '0',
    },
  );
  return { baseUrl: `http://127.0.0.1:${port}`, servicePid: service.pid! };
}

/** B's report ids, its webhook on the fast receiver and a report of its own created through the API. */
async function prepareB(stage: Omit<Stage, 'b' | 'aMax'>, b: SeededCompany): Promise<Stage['b']> {
  const res = await fetch(`${stage.baseUrl}/reports?limit=20`, { headers: { 'x-api-key': b.key } });
  const ids = ((await res.json()) as { id: string }[]).map((r) => r.id);
  await appCall(stage, 'PUT', `/companies/${b.companyId}/webhook`, { url: stage.receivers.fast.url('/b') });
  const body = JSON.stringify(benchReport('b-to-publish', b.inspectorEmail));
  return { ...b, ids, publishReportId: await createReport(stage.baseUrl, b.key, body) };
}

export async function setUpStage(): Promise<Stage> {
  const { database, dir } = await startBenchDatabase('intake-fairness-pg-');
  const { a, b } = await seed(database.url);
  const { slow, fast, caFile } = await startReceivers(dir);
  const appToken = `iat_${randomBytes(32).toString('base64url')}`;
  const { baseUrl, servicePid } = await startService(database.url, appToken, caFile);
  await waitUntilUp(`${baseUrl}/auth`, { 'x-api-key': a.key });
  await waitUntilUp(`${baseUrl}/readyz`);
  const stage = { baseUrl, appToken, servicePid, databaseUrl: database.url, a, receivers: { slow, fast } };
  await appCall(stage, 'PUT', `/companies/${a.companyId}/webhook`, { url: slow.url('/a') });
  console.log(`creating A's ${MAXIMAL_REPORTS} maximal reports`);
  const aMax = await createMaximalCompany(stage);
  return { ...stage, aMax, b: await prepareB(stage, b) };
}

/** Between phases: what a flood left queued in the service drains. */
const SETTLE_MS = 2_000;

/**
 * Between phases: what a flood left queued in the service drains, and what it wrote reaches the disk
 * (a CHECKPOINT, then the operating system's dirty pages written back), so that a phase is not measured
 * while the previous one's writes are flushed (measured: fsync stalls of 50-200 ms a minute after the
 * creates flood, in whichever phase came then). A phase's own writes still stall it.
 */
export async function settle(stage: Stage): Promise<void> {
  await sleep(SETTLE_MS);
  const client = new pg.Client({ connectionString: stage.databaseUrl });
  await client.connect();
  try {
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
  await promisify(execFile)('sync', [], { timeout: 60_000 });
}

/**
 * The machine's disk stalls (disk-probe.ts, a process at B's priority, when one is given): those between
 * two instants, in ms.
 */
export function diskProbe(priority: number | undefined): { stallsMs(from: number, to: number): number[] } {
  const child = startChild('disk-probe', ['--import', 'tsx', 'scripts/bench/disk-probe.ts'], {}, 'pipe');
  if (priority !== undefined) os.setPriority(child.pid!, priority);
  const stalls: { at: number; ms: number }[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const [at, ms] = line.split(' ').map(Number);
    stalls.push({ at: at!, ms: ms! });
  });
  return { stallsMs: (from, to) => stalls.filter((s) => s.at >= from && s.at <= to).map((s) => s.ms) };
}

/**
 * The bench's priorities, set only by root (raising one back needs it):
 * - This process, which drives A's floods, runs niced (19). A's load generator shares this machine's
 *   two cores with the service, PostgreSQL and B's client: at full priority it takes CPU from all three
 *   (parsing megabytes of answers a second), and B's figures would measure the operating system's
 *   scheduler, not how the service shares itself. Niced, it gets the CPU nobody else wants, as a load
 *   generator on a machine of its own would.
 * - The service's main thread, B's client and the disk probe run at `priority` (BENCH_FAIRNESS_PRIORITY,
 *   default -5), above PostgreSQL's 0, for the same reason: on these two cores the service shares its
 *   CPU with PostgreSQL, and at one priority each answer that wakes the service waits for a core behind
 *   PostgreSQL's work on A's statements (measured under A's 1 MiB creates: the service's main thread
 *   waited in the run queue 136 ms of each second, 0.49 ms a wake-up on average, with 45% of the
 *   machine idle; B alone, 24 ms). A service on a host, or a CPU share, of its own does not wait so.
 *   PostgreSQL keeps the ordinary priority: A's and B's statements share it as they would anywhere.
 * Answers the priority of B's client (undefined: none set) and a line for the report.
 */
export function setPriorities(servicePid: number, priority: number): { client?: number; description: string } {
  try {
    os.setPriority(19);
    os.setPriority(process.pid, 0); // fails unless this process may raise priorities again
    os.setPriority(19);
  } catch {
    console.log("A's floods run at the ordinary priority (raising priorities needs root): B shares the CPU with them");
    return { description: 'all at 0 (setting them needs root)' };
  }
  // On Linux a pid's priority is its main thread's: the one that answers; V8's and libuv's helpers keep 0.
  os.setPriority(servicePid, priority);
  return {
    client: priority,
    description: `the service's main thread, B's client and the disk probe at ${priority}, PostgreSQL at 0, A's floods at 19`,
  };
}
