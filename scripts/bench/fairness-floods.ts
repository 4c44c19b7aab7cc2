/**
 * What company A does to the service in `npm run bench:fairness`, one flood at a time: each runs
 * for the duration given, stops by itself, and answers how A's requests were answered (counts by
 * status; `error` and `timeout` for requests that got none).
 */
import autocannon from 'autocannon';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { benchReport } from './seed.js';
import type { Stage } from './fairness-setup.js';
import { maximalReportBody } from './maximal-report.js';

export type Statuses = Record<string, number>;

/** The key of Statuses counting A's requests still unanswered when its flood stopped. */
export const OPEN = 'open';

export interface Flood {
  name: string;
  /** What A does, for the table. */
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
  const ended = Object.values(statuses).reduce((x, y) => x + y, 0);
  // Sent but still waiting for their answer when the flood stopped (autocannon closes their connections).
  // With a rate, autocannon 9 counts each connection's first request as its rate (run.js): taken back.
  const rateCounted = options.overallRate ? options.overallRate - result.connections : 0;
  const sent = result.requests.sent - rateCounted;
  if (sent > ended) statuses[OPEN] = sent - ended;
  return statuses;
}

const json = (key: string) => ({ 'x-api-key': key, 'content-type': 'application/json' });

/** Creates with restIds `${prefix}-1`, `${prefix}-2`, … from `connections` connections. */
function creates(stage: Stage, key: string, connections: number, duration: number, body: (restId: string) => string) {
  let n = 0;
  return cannon({
    url: stage.baseUrl,
    connections,
    duration,
    headers: json(key),
    requests: [
      {
        method: 'POST',
        path: '/reports/new',
        setupRequest: (req) => ({ ...req, body: body(`flood-${Date.now()}-${++n}`) }),
      },
    ],
  });
}

/**
 * A's transaction locks its report seed-1 (SELECT … FOR UPDATE from a connection of its own) while
 * 16 connections keep writing that report by restId; the lock is released when the flood ends.
 */
async function rowLock(stage: Stage, duration: number): Promise<Statuses> {
  const locker = new pg.Client({ connectionString: stage.databaseUrl });
  await locker.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('SELECT id FROM reports WHERE company_id = $1 AND rest_id = $2 FOR UPDATE', [
      stage.a.companyId,
      'seed-1',
    ]);
    return await cannon({
      url: stage.baseUrl,
      connections: 16,
      duration,
      headers: json(stage.a.key),
      requests: [
        { method: 'POST', path: '/reports/new', body: JSON.stringify(benchReport('seed-1', stage.a.inspectorEmail)) },
      ],
    });
  } finally {
    await locker.query('ROLLBACK').catch(() => undefined);
    await locker.end();
  }
}

/** 32 test deliveries to A's receiver (answers after 8 s) at all times, each sent again once answered. */
async function slowWebhooks(stage: Stage, duration: number): Promise<Statuses> {
  const statuses: Statuses = {};
  const end = Date.now() + duration * 1000;
  const url = `${stage.baseUrl}/internal/companies/${stage.a.companyId}/webhook/test`;
  const headers = { authorization: `Bearer ${stage.appToken}`, 'content-type': 'application/json' };
  const sender = async () => {
    while (Date.now() < end) {
      const res = await fetch(url, { method: 'POST', headers, body: '{}', signal: AbortSignal.timeout(30_000) }).catch(
        () => undefined,
      );
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

function list(stage: Stage, key: string, duration: number, limit: () => number): Promise<Statuses> {
  return cannon({
    url: stage.baseUrl,
    connections: 64,
    duration,
    headers: { 'x-api-key': key },
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/reports?limit=${limit()}` }) }],
  });
}

export const FLOODS: Flood[] = [
  {
    name: 'list',
    label: '64 conns GET /reports?limit=100',
    run: (stage, d) => list(stage, stage.a.key, d, () => 100),
  },
  {
    name: 'create',
    label: '64 conns creates, distinct restIds',
    run: (stage, d) =>
      creates(stage, stage.a.key, 64, d, (id) => JSON.stringify(benchReport(id, stage.a.inspectorEmail))),
  },
  {
    name: 'list-max',
    label: '64 conns list over 40 maximal reports',
    run: (stage, d) => list(stage, stage.aMax.key, d, () => 100),
  },
  {
    name: 'list-max-varying',
    label: 'the same, limit 1..100 (cache thrash)',
    run: (stage, d) => list(stage, stage.aMax.key, d, () => 1 + Math.floor(Math.random() * 100)),
  },
  {
    name: 'unknown-key',
    label: '4,000 req/s with an unknown key',
    run: (stage, d) =>
      cannon({
        url: `${stage.baseUrl}/reports?limit=20`,
        connections: 32,
        overallRate: 4_000,
        duration: d,
        headers: { 'x-api-key': UNKNOWN_KEY },
      }),
  },
  { name: 'row-lock', label: 'row lock held, 16 conns write that report', run: rowLock },
  { name: 'slow-webhook', label: '32 test deliveries to an 8 s receiver', run: slowWebhooks },
  {
    name: 'big-bodies',
    label: '64 conns 1 MiB creates',
    run: (stage, d) => {
      // One maximal body, its restId swapped per request (cheaper than building a megabyte each time).
      const placeholder = 'R'.repeat(255);
      const template = maximalReportBody(placeholder, stage.aMax.inspectorEmails);
      return creates(stage, stage.aMax.key, 64, d, (id) => template.replace(placeholder, id.padEnd(255, '_')));
    },
  },
];
