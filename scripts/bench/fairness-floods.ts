// The floods company A sends in `npm run bench:fairness`, one at a time; each reports how A's requests
// were responded to (counts by status, plus `error` and `timeout`).

import autocannon from 'autocannon';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { benchReport } from './seed.js';
import { maximalReportBody, type Stage } from './fairness-setup.js';

export type Statuses = Record<string, number>;

export interface Flood {
  name: string;
  label: string;
  run(stage: Stage, durationSec: number): Promise<Statuses>;
}

/** An unknown key: well-formed (`irk_` and 43 base64url characters), the same on every request. */
const UNKNOWN_KEY = `irk_${'A'.repeat(43)}`;

async function cannon(options: autocannon.Options): Promise<Statuses> {
  const result = await autocannon({ timeout: 30, ...options });
  const statuses: Statuses = {};
  for (const [status, { count = 0 }] of Object.entries(result.statusCodeStats ?? {})) {
    if (count > 0) statuses[status] = count;
  }
  if (result.timeouts > 0) statuses.timeout = result.timeouts;
  if (result.errors - result.timeouts > 0) statuses.error = result.errors - result.timeouts;
  return statuses;
}

/** `connections` connections of A's key sending what request(n) makes, for `duration` seconds. */
function flood(stage: Stage, key: string, connections: number, duration: number, request: (n: number) => object) {
  let n = 0;
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  const setupRequest = (req: autocannon.Request) => ({ ...req, ...request(++n) });
  return cannon({ url: stage.baseUrl, connections, duration, headers, requests: [{ setupRequest }] });
}

const create = (body: string) => ({ method: 'POST', path: '/reports/new', body });
const list = (limit: number) => ({ method: 'GET', path: `/reports?limit=${limit}` });

/** A's transaction holds a lock on its report seed-1 while 16 connections keep writing that report. */
async function rowLock(stage: Stage, duration: number): Promise<Statuses> {
  const locker = new pg.Client({ connectionString: stage.databaseUrl });
  await locker.connect();
  try {
    await locker.query('BEGIN');
    const lock = 'SELECT id FROM reports WHERE company_id = $1 AND rest_id = $2 FOR UPDATE';
    await locker.query(lock, [stage.a.companyId, 'seed-1']);
    const body = JSON.stringify(benchReport('seed-1', stage.a.inspectorEmail));
    return await flood(stage, stage.a.key, 16, duration, () => create(body));
  } finally {
    await locker.end();
  }
}

/** 32 test deliveries to A's receiver (answers after 8 s) at all times, each sent again once answered. */
async function slowWebhooks(stage: Stage, duration: number): Promise<Statuses> {
  const statuses: Statuses = {};
  const end = Date.now() + duration * 1000;
  const url = `${stage.baseUrl}/internal/companies/${stage.a.companyId}/webhook/test`;
  const init = {
    method: 'POST',
    headers: { authorization: `Bearer ${stage.appToken}`, 'content-type': 'application/json' },
    body: '{}',
  };
  const sender = async () => {
    while (Date.now() < end) {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) }).catch(() => undefined);
      await res?.arrayBuffer();
      const status = res ? String(res.status) : 'error';
      statuses[status] = (statuses[status] ?? 0) + 1;
      // The application waits as a 503 asks (Retry-After) before it tries again, as it does for an inspector.
      if (res?.status === 503) await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
    }
  };
  await Promise.all(Array.from({ length: 32 }, sender));
  return statuses;
}

/** One maximal body, its restId swapped per request (cheaper than building a megabyte each time). */
function bigBodies(stage: Stage, duration: number): Promise<Statuses> {
  const placeholder = 'R'.repeat(255);
  const template = maximalReportBody(placeholder, stage.aMax.inspectorEmails);
  const restId = (n: number) => `flood-${Date.now()}-${n}`.padEnd(255, '_');
  return flood(stage, stage.aMax.key, 64, duration, (n) => create(template.replace(placeholder, restId(n))));
}

export const FLOODS: Flood[] = [
  { name: 'list', label: '64 conns GET /reports?limit=100', run: (s, d) => flood(s, s.a.key, 64, d, () => list(100)) },
  {
    name: 'create',
    label: '64 conns creates, distinct restIds',
    run: (s, d) =>
      flood(s, s.a.key, 64, d, (n) =>
        create(JSON.stringify(benchReport(`flood-${Date.now()}-${n}`, s.a.inspectorEmail))),
      ),
  },
  {
    name: 'list-max',
    label: '64 conns list over 40 maximal reports',
    run: (s, d) => flood(s, s.aMax.key, 64, d, () => list(100)),
  },
  {
    name: 'list-max-varying',
    label: 'the same, limit 1..100 (cache thrash)',
    run: (s, d) => flood(s, s.aMax.key, 64, d, () => list(1 + Math.floor(Math.random() * 100))),
  },
  {
    name: 'unknown-key',
    label: '4,000 req/s with an unknown key',
    run: (s, d) =>
      cannon({
        url: `${s.baseUrl}/reports?limit=20`,
        connections: 32,
        overallRate: 4_000,
        duration: d,
        headers: { 'x-api-key': UNKNOWN_KEY },
      }),
  },
  { name: 'row-lock', label: 'row lock held, 16 conns write that report', run: rowLock },
  { name: 'slow-webhook', label: '32 test deliveries to an 8 s receiver', run: slowWebhooks },
  { name: 'big-bodies', label: '64 conns 1 MiB creates', run: bigBodies },
];
