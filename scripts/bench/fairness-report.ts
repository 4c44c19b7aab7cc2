/** The figures of `npm run bench:fairness`: B's latencies per phase, the table and the verdict (every p99 ratio within MAX_RATIO, no 5xx for B). */
import { OPEN, type Statuses } from './fairness-floods.js';
import os from 'node:os';
import { formatTable } from './lifecycle.js';
import type { Sample, SteadyResult } from './steady-client.js';

/** B's p99 under a flood may be at most this many times its p99 alone. */
export const MAX_RATIO = 3;
/** A disk stall this long (an fsync of the disk probe's): B's figures of that phase measure the machine too. */
export const DISK_STALL_MS = 50;
/** Whether the disk stalled (DISK_STALL_MS or more) during the phase of this row. */
export const diskStalled = (row: Pick<PhaseRow, 'diskStallsMs'>) => row.diskStallsMs.some((ms) => ms >= DISK_STALL_MS);

export interface Latency {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface PhaseRow {
  flood: string;
  label: string;
  /** B's partner mix (get, list, create). */
  b: Latency;
  /** B's creates alone (what a row lock of A's holds back). */
  bCreate: Latency;
  /** Every request of B, the application API's ones included. */
  b5xx: number;
  b429: number;
  /** B's requests that got no answer (network error or 30 s). */
  bNoAnswer: number;
  /** B's statuses by operation, e.g. { publish: { 200: 5 } }. */
  bStatuses: Record<string, Statuses>;
  /** The distinct 5xx answers B got, as `op status: body`. */
  bErrors: string[];
  p99Ratio: number | null;
  aStatuses: Statuses;
  peakRssMb: number;
  clientMaxSendLagMs: number;
  /** The machine's fsyncs of STALL_MS or more during the phase (disk-probe.ts), in ms. */
  diskStallsMs: number[];
  /** The worst disk stall of each run of the phase set aside for one, in ms (see fairness.ts). */
  setAside: number[];
  durationSec: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export function latency(samples: Sample[]): Latency {
  const ms = samples.map((s) => s.ms).sort((x, y) => x - y);
  return { count: ms.length, p50Ms: percentile(ms, 50), p99Ms: percentile(ms, 99), maxMs: ms.at(-1) ?? NaN };
}

function byOperation(samples: Sample[]): Record<string, Statuses> {
  const out: Record<string, Statuses> = {};
  for (const s of samples) {
    const statuses = (out[s.op] ??= {});
    const key = s.status === 0 ? 'none' : String(s.status);
    statuses[key] = (statuses[key] ?? 0) + 1;
  }
  return out;
}

/** A request of B's partner mix (the application API's calls are counted apart). */
export const isPartner = (s: Sample) => ['get', 'list', 'create'].includes(s.op);

export function phaseRow(
  flood: { name: string; label: string },
  steady: SteadyResult,
  extra: {
    aStatuses: Statuses;
    peakRssMb: number;
    durationSec: number;
    diskStallsMs: number[];
    setAside?: number[];
  },
): PhaseRow {
  const partner = steady.samples.filter(isPartner);
  const b = latency(partner);
  return {
    flood: flood.name,
    label: flood.label,
    b,
    bCreate: latency(partner.filter((s) => s.op === 'create')),
    b5xx: steady.samples.filter((s) => s.status >= 500).length,
    b429: steady.samples.filter((s) => s.status === 429).length,
    bNoAnswer: steady.samples.filter((s) => s.status === 0).length,
    bStatuses: byOperation(steady.samples),
    bErrors: [
      ...new Set(steady.samples.filter((s) => s.error !== undefined).map((s) => `${s.op} ${s.status}: ${s.error}`)),
    ],
    // Set once B alone is known (fairness.ts).
    p99Ratio: null,
    aStatuses: extra.aStatuses,
    peakRssMb: extra.peakRssMb,
    clientMaxSendLagMs: steady.maxSendLagMs,
    diskStallsMs: extra.diskStallsMs,
    setAside: extra.setAside ?? [],
    durationSec: extra.durationSec,
  };
}

const statusText = (s: Statuses) =>
  Object.entries(s)
    .map(([status, count]) => `${status}×${count}`)
    .join(' ') || '-';

/** A's requests answered (or failed) during its flood, those still open at its end left out. */
const answered = (s: Statuses) =>
  Object.entries(s).reduce((sum, [status, count]) => (status === OPEN ? sum : sum + count), 0);

export function table(rows: PhaseRow[]): string {
  return formatTable(
    [
      'flood',
      'A does',
      'B p50 ms',
      'B p99 ms',
      'p99 / alone',
      'B max ms',
      'B create p99',
      'B 5xx',
      'B 429',
      "A's statuses",
      'A req/s',
      'peak RSS MB',
      'disk stalls',
    ],
    rows.map((r) => [
      r.flood,
      r.label,
      r.b.p50Ms.toFixed(1),
      r.b.p99Ms.toFixed(1),
      r.p99Ratio === null ? '' : `${r.p99Ratio.toFixed(1)}×`,
      r.b.maxMs.toFixed(0),
      r.bCreate.p99Ms.toFixed(1),
      String(r.b5xx + r.bNoAnswer),
      String(r.b429),
      statusText(r.aStatuses),
      r.flood === 'alone' ? '' : (answered(r.aStatuses) / r.durationSec).toFixed(0),
      r.peakRssMb.toFixed(0),
      (r.diskStallsMs.length === 0 ? '-' : `${r.diskStallsMs.length}, max ${Math.max(...r.diskStallsMs)} ms`) +
        (r.setAside.length === 0 ? '' : ` (${r.setAside.length} run${r.setAside.length > 1 ? 's' : ''} set aside)`),
    ]),
  );
}

/** Every flood's p99 ratio within MAX_RATIO, and no 5xx (nor request left unanswered) for B anywhere. */
export function verdict(rows: PhaseRow[]): { met: boolean; ratiosMet: boolean; no5xx: boolean } {
  const floods = rows.filter((r) => r.p99Ratio !== null);
  const ratiosMet = floods.every((r) => r.p99Ratio! <= MAX_RATIO);
  const no5xx = rows.every((r) => r.b5xx === 0 && r.bNoAnswer === 0);
  return { met: ratiosMet && no5xx && floods.length > 0, ratiosMet, no5xx };
}

export function printReport(
  rows: PhaseRow[],
  load: { before: number[]; after: number[] },
  settings: { durationSec: number; rate: number; priorities: string },
): ReturnType<typeof verdict> {
  const result = verdict(rows);
  console.log('');
  console.log(table(rows));
  for (const r of rows.filter((r) => r.bStatuses.publish || r.bStatuses['webhook-test'])) {
    const calls = ['webhook-test', 'publish'].map(
      (op) =>
        `${op} ${
          Object.entries(r.bStatuses[op] ?? {})
            .map(([s, n]) => `${s}×${n}`)
            .join(' ') || '-'
        }`,
    );
    console.log(`B's application API calls under ${r.flood}: ${calls.join('; ')}`);
  }
  for (const r of rows) for (const e of r.bErrors) console.log(`B's 5xx under ${r.flood}: ${e}`);
  const stalled = rows.filter(diskStalled).map((r) => r.flood);
  if (stalled.length > 0) {
    console.log(
      `the machine's disk stalled (an fsync of ${DISK_STALL_MS} ms or more) during: ${stalled.join(', ')}; ` +
        `B's commits there waited for the disk whatever A did (each of its runs stalled): run again for figures of the service`,
    );
  }
  console.log(
    `every ratio within ${MAX_RATIO}×, no 5xx for B: ${result.met ? 'met' : 'missed'}` +
      ` (ratios ${result.ratiosMet ? 'met' : 'missed'}, 5xx ${result.no5xx ? 'none' : 'some'})`,
  );
  const fmt = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  console.log(
    `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown'}, Node ${process.version}, ` +
      `load average ${fmt(load.before)} before, ${fmt(load.after)} after; ${settings.durationSec} s per phase, B at ${settings.rate} req/s`,
  );
  console.log(`priorities: ${settings.priorities}`);
  return result;
}
