/**
 * `npm run bench`'s figures from its rows: each row's share of bare Express, each process's peak RSS,
 * the compared operations side by side, the experiments, the targets met or missed, what the workers
 * gained, and the JSON report that holds them all.
 */
import os from 'node:os';
import {
  COMPARED,
  CONNECTIONS,
  DURATION,
  LARGE,
  RSS_BUDGET_MB,
  SMALL,
  TIMES_STRAIGHTFORWARD,
  WARMUP,
  WORKERS,
  type Case,
  type Row,
  type Target,
} from './hot-paths-settings.js';
import type { Targets } from './hot-paths-targets.js';
import { memory } from './lifecycle.js';
import type { WriteShape } from './write-shapes.js';

type RowOf = (target: Target, name: string) => Row | undefined;

/** Sets each row's ofBare and returns bare Express's requests/s: the mean of its runs. */
function applyOfBare(rows: Row[]): number {
  const bareRows = rows.filter((r) => r.target === 'bare');
  const bareRps = bareRows.reduce((sum, r) => sum + r.requestsPerSec, 0) / bareRows.length;
  for (const row of rows) row.ofBare = bareRps > 0 ? row.requestsPerSec / bareRps : null;
  return bareRps;
}

/**
 * The high-water mark of one process, or the highest sum over the workers sampled during a case:
 * read while the processes running all the time still run.
 */
function peakRss(rows: Row[], targets: Targets, stoppedHwm: Map<Target, number>): Record<Target, number> {
  const { pids, onDemand } = targets;
  return Object.fromEntries(
    (Object.keys(pids) as Target[]).map((t) => [
      t,
      Math.max(
        stoppedHwm.get(t) ?? (t in onDemand ? 0 : memory(pids[t]).hwm),
        ...rows.filter((r) => r.target === t).map((r) => r.peakRssMb),
      ),
    ]),
  ) as Record<Target, number>;
}

function compare(rowOf: RowOf) {
  return COMPARED.filter((c) => rowOf('service', c.case) && rowOf('straightforward', c.case)).map((c) => {
    const service = rowOf('service', c.case)!;
    const plain = rowOf('straightforward', c.case)!;
    return {
      ...c,
      service: service.requestsPerSec,
      straightforward: plain.requestsPerSec,
      timesStraightforward: plain.requestsPerSec > 0 ? service.requestsPerSec / plain.requestsPerSec : 0,
      ofBare: service.ofBare ?? 0,
      errors: service.errors + plain.errors,
    };
  });
}

/**
 * The experiments, operation by operation: the floor against the targets, and what the heap ceiling
 * and the notifications cost, as requests/s over the service's in the same run.
 */
function experimentsOf(rowOf: RowOf, bareRps: number) {
  return COMPARED.filter((c) => rowOf('service', c.case)).map((c) => {
    const service = rowOf('service', c.case)!;
    const plain = rowOf('straightforward', c.case);
    const floorRow = rowOf('floor', c.case);
    const overService = (row?: Row) => (row ? row.requestsPerSec / service.requestsPerSec : null);
    // The most the process could answer with a whole core to itself and a database that cost nothing:
    // its own CPU per request (a process already using a core or more is at its ceiling).
    const nodeBound = (service.requestsPerSec * 100) / Math.min(Math.max(service.serverCpuPct, 1), 100);
    return {
      label: c.label,
      floor: floorRow?.requestsPerSec ?? null,
      floorTimesStraightforward: floorRow && plain ? floorRow.requestsPerSec / plain.requestsPerSec : null,
      floorOfBare: floorRow?.ofBare ?? null,
      cappedOfService: overService(rowOf('capped', c.case)),
      unnotifiedOfService: overService(rowOf('unnotified', c.case)),
      nodeBound,
      nodeBoundTimesStraightforward: plain ? nodeBound / plain.requestsPerSec : null,
      nodeBoundOfBare: bareRps > 0 ? nodeBound / bareRps : null,
    };
  });
}

/** Each target (see COMPARED, TIMES_STRAIGHTFORWARD, RSS_BUDGET_MB), met or not. */
function targetsMet(rows: Row[], comparison: ReturnType<typeof compare>, rowOf: RowOf, serviceRssMb: number) {
  const listSmall = rowOf('service', 'GET /reports?limit=20 (1k)')?.p99Ms;
  const listLarge = rowOf('service', 'GET /reports?limit=20 (1M)')?.p99Ms;
  const targets: Record<string, boolean> = {};
  for (const c of comparison) {
    targets[`${c.label} >= ${TIMES_STRAIGHTFORWARD} x straightforward`] =
      c.timesStraightforward >= TIMES_STRAIGHTFORWARD;
  }
  for (const c of comparison) {
    if (c.bareGoal !== undefined) targets[`${c.label} >= ${c.bareGoal} x bare Express`] = c.ofBare >= c.bareGoal;
  }
  if (listSmall !== undefined && listLarge !== undefined)
    targets['list p99 1M <= 1.5 x 1k'] = listLarge <= 1.5 * listSmall;
  targets[`service peak RSS <= ${RSS_BUDGET_MB} MB`] = serviceRssMb <= RSS_BUDGET_MB;
  targets['zero errors'] = rows.every((r) => r.errors === 0);
  const listP99Ratio1Mto1k = listSmall && listLarge ? listLarge / listSmall : null;
  return { targets, listP99Ratio1Mto1k };
}

/** Requests/s with the workers over the single process, case by case. */
function scaleOutOf(rowOf: RowOf, cases: Case[]): Record<string, number> {
  return Object.fromEntries(
    cases.flatMap((c) => {
      const [one, many] = [rowOf('service', c.name), rowOf('workers', c.name)];
      return one && many && one.requestsPerSec > 0 ? [[c.name, many.requestsPerSec / one.requestsPerSec]] : [];
    }),
  );
}

export type Figures = ReturnType<typeof summarize>;

/** Every figure of the run; call it while the processes running all the time still run. */
export function summarize(rows: Row[], cases: Case[], targets: Targets, stoppedHwm: Map<Target, number>) {
  const bareRps = applyOfBare(rows);
  const peakRssMb = peakRss(rows, targets, stoppedHwm);
  const rowOf: RowOf = (target, name) => rows.find((r) => r.target === target && r.case === name);
  const comparison = compare(rowOf);
  return {
    bareRps,
    bareRows: rows.filter((r) => r.target === 'bare'),
    peakRssMb,
    comparison,
    experiments: experimentsOf(rowOf, bareRps),
    ...targetsMet(rows, comparison, rowOf, peakRssMb.service),
    scaleOut: scaleOutOf(rowOf, cases),
  };
}

export type Report = ReturnType<typeof buildReport>;

/** The JSON report (BENCH_OUT): the machine, the settings, every figure and every row. */
export function buildReport(
  figures: Figures,
  rows: Row[],
  serviceIdleRssMb: number,
  writeShapes: WriteShape[],
  started: number,
) {
  const env = process.env;
  return {
    date: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      memoryGb: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      loadAverage: os.loadavg(),
    },
    settings: {
      durationSec: DURATION,
      warmupSec: WARMUP,
      connections: CONNECTIONS,
      smallCompanyReports: SMALL,
      largeCompanyReports: LARGE,
      validateResponses: env.VALIDATE_RESPONSES ?? 'default',
      databasePoolSize: env.DATABASE_POOL_MAX ?? 'default',
    },
    serviceIdleRssMb,
    peakRssMb: figures.peakRssMb,
    bareRequestsPerSec: figures.bareRps,
    comparison: figures.comparison,
    experiments: figures.experiments,
    writeShapes,
    workers: WORKERS,
    scaleOut: figures.scaleOut,
    results: rows,
    listP99Ratio1Mto1k: figures.listP99Ratio1Mto1k,
    targets: figures.targets,
    totalSec: (Date.now() - started) / 1000,
  };
}
