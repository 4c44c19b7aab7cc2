/**
 * `npm run bench`'s settings (from the environment; see hot-paths.ts), the processes it drives, its
 * cases and rows, and the targets it checks.
 */
import type autocannon from 'autocannon';
import path from 'node:path';
import { ROOT } from './lifecycle.js';

const env = process.env;
export const DURATION = Number(env.BENCH_DURATION ?? 8);
export const WARMUP = Number(env.BENCH_WARMUP ?? 2);
export const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 16);
export const SMALL = 1_000;
export const LARGE = Number(env.BENCH_LARGE ?? 1_000_000);
export const OUT = path.resolve(ROOT, env.BENCH_OUT ?? 'bench-results.json');
export const WORKERS = Number(env.BENCH_WORKERS ?? 2);
export const ONLY = env.BENCH_ONLY?.split(',')
  .map((s) => s.trim())
  .filter(Boolean);
export const CPU_PROF_DIR = env.BENCH_CPU_PROF ? path.resolve(env.BENCH_CPU_PROF) : undefined;

/**
 * `workers`: the service again, with BENCH_WORKERS workers behind its port (WEB_CONCURRENCY).
 * The experiments, each on the compared operations: `floor`, the service's data layer behind bare
 * Express with no guarantee around it (scripts/bench/floor.ts: what any change on the Node side could
 * at best reach); `capped`, the service with a V8 heap ceiling (HEAP_CAP_ARGS: what holding its RSS
 * under the budget costs); `unnotified`, the service's writes while report writes do not notify
 * (withoutReportNotifications: what keeping the report cache correct across processes costs writes).
 */
export type Target = 'bare' | 'service' | 'straightforward' | 'workers' | 'floor' | 'capped' | 'unnotified';

/** The targets started only for their runs (see hot-paths-targets.ts). */
export type OnDemandTarget = 'workers' | 'capped';

/** The node options of the `capped` experiment, added to those of `npm run start:production`. */
export const HEAP_CAP_ARGS = ['--max-old-space-size=512'];

export interface Case {
  name: string;
  requests: autocannon.Request[];
  headers?: Record<string, string>;
  /** Also driven against the straightforward implementation, right before or after the service. */
  compared?: boolean;
}

export interface Row {
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

/**
 * The compared operations, with the share of bare Express each must reach (none for updates; `burst`:
 * 16 connections updating one report);
 * each must also reach TIMES_STRAIGHTFORWARD × the straightforward implementation's requests/s.
 */
export const COMPARED = [
  { label: 'get', case: 'GET /reports/{id}', bareGoal: 0.4 },
  { label: 'list', case: 'GET /reports?limit=20 (1M)', bareGoal: 0.3 },
  { label: 'create', case: 'POST /reports/new (create)', bareGoal: 0.3 },
  { label: 'update', case: 'POST /reports/new (update)', bareGoal: undefined },
  { label: 'burst', case: 'POST /reports/new (one-report burst)', bareGoal: undefined },
];
export const TIMES_STRAIGHTFORWARD = 2.5;
export const RSS_BUDGET_MB = 150;
