/** The figures of `npm run bench:fairness`: B's latencies per phase, the table and the verdict (every p99 ratio within MAX_RATIO, no 5xx for B). */
import { OPEN, type Statuses } from './fairness-floods.js';
import { formatTable } from './lifecycle.js';
import type { Sample, SteadyResult } from './steady-client.js';

/** B's p99 under a flood may be at most this many times its p99 alone. */
export const MAX_RATIO = 3;

export interface Latency {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** What a phase used of the machine: CPU in percent of one core, and the service's peak RSS. */
export interface Usage {
  cpuPct: { service: number; postgres: number; generator: number };
  peakRssMb: number;
  durationSec: number;
}

export interface PhaseRow extends Usage {
  flood: string;
  label: string;
  /** B's partner mix (get, list, create). */
  b: Latency;
  /** B's requests answered 5xx or not at all (network error or 30 s), the application API's ones included. */
  bFailed: number;
  b429: number;
  /** The distinct 5xx answers B got. */
  bErrors: string[];
  p99Ratio: number | null;
  aStatuses: Statuses;
}

export function latency(samples: Sample[]): Latency {
  const ms = samples.map((s) => s.ms).sort((x, y) => x - y);
  const at = (p: number) =>
    ms.length === 0 ? NaN : ms[Math.min(ms.length - 1, Math.ceil((p / 100) * ms.length) - 1)]!;
  return { count: ms.length, p50Ms: at(50), p99Ms: at(99), maxMs: ms.at(-1) ?? NaN };
}

const statusText = (s: Statuses) =>
  Object.entries(s)
    .map(([status, count]) => `${status}×${count}`)
    .join(' ') || '-';

/** A request of B's partner mix (the application API's calls are counted apart). */
export const isPartner = (s: Sample) => ['get', 'list', 'create'].includes(s.op);

export function phaseRow(
  flood: { name: string; label: string },
  steady: Pick<SteadyResult, 'samples'>,
  aStatuses: Statuses,
  usage: Usage,
): PhaseRow {
  return {
    flood: flood.name,
    label: flood.label,
    b: latency(steady.samples.filter(isPartner)),
    bFailed: steady.samples.filter((s) => s.status >= 500 || s.status === 0).length,
    b429: steady.samples.filter((s) => s.status === 429).length,
    bErrors: [...new Set(steady.samples.filter((s) => s.error).map((s) => `${s.op} ${s.status}: ${s.error}`))],
    p99Ratio: null,
    aStatuses,
    ...usage,
  };
}

/** A's requests answered (or failed) during its flood, those still open at its end left out. */
const answered = (s: Statuses) =>
  Object.entries(s).reduce((sum, [status, count]) => (status === OPEN ? sum : sum + count), 0);

function table(rows: PhaseRow[]): string {
  const header = ['flood', 'A does', 'B p50 ms', 'B p99 ms', 'p99 / alone', 'B max ms'];
  header.push('B 5xx', 'B 429', "A's statuses", 'A req/s', 'CPU% svc/pg/A', 'peak RSS MB');
  return formatTable(
    header,
    rows.map((r) => [
      ...[r.flood, r.label, r.b.p50Ms.toFixed(1), r.b.p99Ms.toFixed(1)],
      r.p99Ratio === null ? '' : `${r.p99Ratio.toFixed(1)}×`,
      ...[r.b.maxMs.toFixed(0), String(r.bFailed), String(r.b429), statusText(r.aStatuses)],
      r.p99Ratio === null ? '' : (answered(r.aStatuses) / r.durationSec).toFixed(0),
      [r.cpuPct.service, r.cpuPct.postgres, r.cpuPct.generator].map((p) => p.toFixed(0)).join('/'),
      r.peakRssMb.toFixed(0),
    ]),
  );
}

/** Every flood's p99 ratio within MAX_RATIO, and no 5xx (nor request left unanswered) for B anywhere. */
export function verdict(rows: PhaseRow[]) {
  const floods = rows.filter((r) => r.p99Ratio !== null);
  const ratiosMet = floods.every((r) => r.p99Ratio! <= MAX_RATIO);
  const no5xx = rows.every((r) => r.bFailed === 0);
  return { met: ratiosMet && no5xx && floods.length > 0, ratiosMet, no5xx };
}

export function printReport(rows: PhaseRow[], cpus: number): ReturnType<typeof verdict> {
  const result = verdict(rows);
  console.log(`\n${table(rows)}`);
  for (const r of rows) for (const e of r.bErrors) console.log(`B's 5xx under ${r.flood}: ${e}`);
  console.log(
    `every ratio within ${MAX_RATIO}×, no 5xx for B: ${result.met ? 'met' : 'missed'}` +
      ` (ratios ${result.ratiosMet ? 'met' : 'missed'}, 5xx ${result.no5xx ? 'none' : 'some'})`,
  );
  console.log(
    `Every process runs at the normal priority, as a user runs them: A's load generator (CPU% A), B's client ` +
      `and PostgreSQL share these ${cpus} cores with the service, so where svc + pg + A nears ${cpus * 100}%, ` +
      `B's latency includes waiting for a core that a service on a machine of its own would not.`,
  );
  return result;
}
