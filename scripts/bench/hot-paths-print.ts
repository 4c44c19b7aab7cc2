/** What `npm run bench` prints at the end: its tables, the targets met or missed, the experiments. */
import path from 'node:path';
import { HEAP_CAP_ARGS, OUT, WORKERS, type Row } from './hot-paths-settings.js';
import type { Figures, Report } from './hot-paths-results.js';
import { formatTable } from './lifecycle.js';

/** CPU time per request in microseconds: steadier than requests/s on a machine shared with other work. */
const perRequest = (cpuPct: number, rps: number) => (rps > 0 ? ((cpuPct / 100 / rps) * 1e6).toFixed(0) : '');

const fixed = (n: number | null, digits = 2) => (n === null ? '' : n.toFixed(digits));

function rowsTable(rows: Row[]): string {
  const header = [
    'case',
    'target',
    'req/s',
    'p50 ms',
    'p99 ms',
    'of bare',
    'errors',
    'requests',
    'peak RSS MB',
    'CPU% node',
    'CPU% pg',
    'node µs/req',
    'pg µs/req',
  ];
  return formatTable(
    header,
    rows.map((r) => [
      r.case,
      r.target,
      r.requestsPerSec.toFixed(0),
      r.p50Ms.toFixed(1),
      r.p99Ms.toFixed(1),
      r.ofBare === null ? '' : r.ofBare.toFixed(2),
      String(r.errors),
      String(r.requests),
      r.peakRssMb.toFixed(0),
      r.serverCpuPct.toFixed(0),
      r.postgresCpuPct.toFixed(0),
      perRequest(r.serverCpuPct, r.requestsPerSec),
      perRequest(r.postgresCpuPct, r.requestsPerSec),
    ]),
  );
}

function comparisonTable({ comparison, bareRps }: Figures): string {
  return formatTable(
    ['operation', 'service req/s', 'straightforward req/s', 'bare req/s', 'x straightforward', 'of bare', 'errors'],
    comparison.map((c) => [
      c.label,
      c.service.toFixed(0),
      c.straightforward.toFixed(0),
      bareRps.toFixed(0),
      c.timesStraightforward.toFixed(2),
      c.ofBare.toFixed(2),
      String(c.errors),
    ]),
  );
}

function experimentsTable({ experiments }: Figures): string {
  return formatTable(
    [
      'operation',
      'floor req/s',
      'floor x straightforward',
      'floor of bare',
      'capped / service',
      'unnotified / service',
      'node-bound req/s',
      'node-bound x straightforward',
      'node-bound of bare',
    ],
    experiments.map((e) => [
      e.label,
      fixed(e.floor, 0),
      fixed(e.floorTimesStraightforward),
      fixed(e.floorOfBare),
      fixed(e.cappedOfService),
      fixed(e.unnotifiedOfService),
      fixed(e.nodeBound, 0),
      fixed(e.nodeBoundTimesStraightforward),
      fixed(e.nodeBoundOfBare),
    ]),
  );
}

/** Every row, the compared operations, the peak RSS and the targets met or missed. */
function printResults(figures: Figures, report: Report): void {
  const { peakRssMb, bareRows } = figures;
  console.log('');
  console.log(rowsTable(report.results));
  console.log('');
  console.log(comparisonTable(figures));
  console.log('');
  console.log(
    `peak RSS: service ${peakRssMb.service.toFixed(0)} MB (idle ${report.serviceIdleRssMb.toFixed(0)} MB), ` +
      `straightforward ${peakRssMb.straightforward.toFixed(0)} MB, bare Express ${peakRssMb.bare.toFixed(0)} MB; ` +
      `bare Express ${bareRows.map((r) => r.requestsPerSec.toFixed(0)).join(' -> ')} req/s (start -> end); ` +
      `list p99 1M/1k: ${report.listP99Ratio1Mto1k?.toFixed(2) ?? 'n/a'}`,
  );
  for (const [target, met] of Object.entries(figures.targets)) {
    console.log(`  ${met ? 'met    ' : 'MISSED '} ${target}`);
  }
}

/** The experiments, the write shapes, what the workers gained. */
function printExperiments(figures: Figures, report: Report): void {
  console.log('');
  console.log(
    `experiments: floor = the data layer on bare Express, no guarantees (scripts/bench/floor.ts); ` +
      `capped = the service with ${HEAP_CAP_ARGS.join(' ')} (peak RSS ${figures.peakRssMb.capped.toFixed(0)} MB); ` +
      `unnotified = the service while report writes do not notify (what the report cache costs writes); ` +
      `node-bound = the service's requests/s with a core to itself and a free database (its own CPU per request)`,
  );
  console.log(experimentsTable(figures));
  console.log(
    'write shapes (PostgreSQL CPU per report written): ' +
      report.writeShapes
        .map((w) => `${w.shape} ${w.postgresUsPerRow.toFixed(0)} µs (${w.rowsPerSec.toFixed(0)} reports/s)`)
        .join(', '),
  );
  if (Object.keys(figures.scaleOut).length > 0) {
    console.log(
      `${WORKERS} workers (peak RSS ${figures.peakRssMb.workers.toFixed(0)} MB in all) / 1 process, requests/s: ` +
        Object.entries(figures.scaleOut)
          .map(([name, ratio]) => `${name} ${ratio.toFixed(2)}`)
          .join(', '),
    );
  }
}

export function printReport(figures: Figures, report: Report): void {
  printResults(figures, report);
  printExperiments(figures, report);
  console.log(
    `machine: ${report.machine.cpus} × ${report.machine.cpuModel}, Node ${process.version}, ` +
      `load ${report.machine.loadAverage.map((l) => l.toFixed(1)).join(' ')}; ` +
      `results in ${path.relative(process.cwd(), OUT) || OUT}; ${report.totalSec.toFixed(0)} s in all`,
  );
}
