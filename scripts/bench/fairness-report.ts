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
      r.diskStallsMs.length === 0 ? '-' : `${r.diskStallsMs.length}, max ${Math.max(...r.diskStallsMs)} ms`,
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
