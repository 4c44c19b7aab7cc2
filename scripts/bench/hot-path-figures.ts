// `npm run bench`'s figures from its rows: each compared case's medians and times the yardsticks, the
// keyed creates beside the unkeyed, and the targets met or missed.
import path from 'node:path';
import { formatTable, machine, serverLabel, type BenchServer } from './lifecycle.js';

export const [CREATE, KEYED] = ['POST /reports/new (create)', 'POST /reports/new (create, Idempotency-Key)'];

/** The compared operations, each to reach TIMES_STRAIGHTFORWARD × the yardstick and, for some, a share of bare Express. */
export const COMPARED = [
  { label: 'get', case: 'GET /reports/{id}', bareGoal: 0.4 },
  { label: 'list', case: 'GET /reports?limit=20 (1M)', bareGoal: 0.3 },
  { label: 'create', case: CREATE, bareGoal: 0.3 },
  { label: 'update', case: 'POST /reports/new (update)' },
  { label: 'burst', case: 'POST /reports/new (one-report burst)' },
];
const TIMES_STRAIGHTFORWARD = 2.5;
const RSS_BUDGET_MB = 150;

export type Target = 'bare' | 'service' | 'straightforward' | 'newcomer';

/** One case driven against one target: its rate, latencies, errors and CPU per request. */
export interface Row {
  case: string;
  target: Target;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  nodeUs: number;
  postgresUs: number;
}

/** The middle value (of an even count, the upper of the two in the middle). */
const median = (values: number[]) => values.toSorted((a, b) => a - b)[values.length >> 1]!;

const [rps, p99] = [(r: Row) => r.requestsPerSec, (r: Row) => r.p99Ms];

/** The service's creates with a key beside those without, round by round (each round ran both). */
function keyedFigures(unkeyed: Row[], keyed: Row[]) {
  if (keyed.length === 0 || keyed.length !== unkeyed.length) return undefined;
  const rounds = keyed.map((k, i) => k.requestsPerSec / unkeyed[i]!.requestsPerSec);
  return { service: median(keyed.map(rps)), p99Ms: median(keyed.map(p99)), rounds, times: median(rounds) };
}

export function figures(rows: Row[], servicePeakMb: number) {
  const rowsOf = (target: Target, name: string) => rows.filter((r) => r.target === target && r.case === name);
  const bare = rows.filter((r) => r.target === 'bare');
  const bareRps = bare.reduce((sum, r) => sum + r.requestsPerSec, 0) / bare.length;
  const comparison = COMPARED.flatMap((c) => {
    const [service, plain] = [rowsOf('service', c.case).map(rps), rowsOf('straightforward', c.case).map(rps)];
    if (service.length === 0 || service.length !== plain.length) return [];
    // Each round's runs were back to back: the median of the rounds' times, not the times of the medians.
    const rounds = service.map((s, i) => s / plain[i]!);
    const newcomer = rowsOf('newcomer', c.case).map(rps);
    const newcomerRounds = newcomer.length === service.length ? service.map((s, i) => s / newcomer[i]!) : [];
    const p99Ms = median(rowsOf('service', c.case).map(p99));
    const [times, ofBare] = [median(rounds), median(service) / bareRps];
    const timesNewcomer = newcomerRounds.length > 0 ? median(newcomerRounds) : undefined;
    return [{ ...c, service: median(service), p99Ms, straightforward: median(plain), rounds, times, ofBare }].map(
      (row) => ({ ...row, newcomerRounds, timesNewcomer }),
    );
  });
  const keyed = keyedFigures(rowsOf('service', CREATE), rowsOf('service', KEYED));
  const targets: Record<string, boolean> = {};
  for (const c of comparison) {
    targets[`${c.label} >= ${TIMES_STRAIGHTFORWARD} x straightforward`] = c.times >= TIMES_STRAIGHTFORWARD;
    if (c.timesNewcomer !== undefined) {
      targets[`${c.label} >= ${TIMES_STRAIGHTFORWARD} x newcomer`] = c.timesNewcomer >= TIMES_STRAIGHTFORWARD;
    }
    if (c.bareGoal !== undefined) targets[`${c.label} >= ${c.bareGoal} x bare Express`] = c.ofBare >= c.bareGoal;
  }
  const [list1k, list1M] = ['1k', '1M'].map((n) => rowsOf('service', `GET /reports?limit=20 (${n})`)[0]);
  if (list1k && list1M) targets['list p99 1M <= 1.5 x 1k'] = list1M.p99Ms <= 1.5 * list1k.p99Ms;
  targets[`service peak RSS <= ${RSS_BUDGET_MB} MB`] = servicePeakMb <= RSS_BUDGET_MB;
  targets['zero errors'] = rows.every((r) => r.errors === 0);
  return { bareRps, comparison, keyed, servicePeakMb, targets };
}

const roundsOf = (times: number[]) => times.map((t) => t.toFixed(2)).join(' ');

export function print(
  { bareRps, comparison, keyed, servicePeakMb, targets }: Figures,
  server: BenchServer,
  out: string,
): void {
  const header = ['operation', 'service req/s', 'p99 ms', 'straightforward req/s', 'x straightforward', 'of bare'];
  const lines = comparison.map((c) => [
    ...[c.label, c.service.toFixed(0), String(c.p99Ms), c.straightforward.toFixed(0), c.times.toFixed(2)],
    ...[c.ofBare.toFixed(2), roundsOf(c.rounds)],
  ]);
  console.log(`\n${formatTable([...header, 'rounds'], lines)}\n`);
  if (keyed) {
    const [service, times] = [keyed.service.toFixed(0), keyed.times.toFixed(2)];
    console.log(`create with Idempotency-Key: service ${service} req/s, p99 ${keyed.p99Ms} ms, ${times} x unkeyed`);
    console.log(`  (rounds ${roundsOf(keyed.rounds)}; the yardstick has no keys)`);
  }
  for (const c of comparison.filter((c) => c.timesNewcomer !== undefined)) {
    console.log(`${c.label}: ${c.timesNewcomer!.toFixed(2)} x newcomer (rounds ${roundsOf(c.newcomerRounds)})`);
  }
  console.log(`bare Express ${bareRps.toFixed(0)} req/s; service peak RSS ${servicePeakMb.toFixed(0)} MB`);
  for (const [target, met] of Object.entries(targets)) console.log(`  ${met ? 'met    ' : 'MISSED '} ${target}`);
  console.log(`PostgreSQL: ${serverLabel(server)}; machine: ${machine()}`);
  console.log(`every row in ${path.relative(process.cwd(), out) || out}`);
}
export type Figures = ReturnType<typeof figures>;
