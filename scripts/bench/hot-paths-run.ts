/**
 * Drives `npm run bench`'s cases with autocannon for a fixed time, one target at a time, sampling RSS
 * and CPU from /proc meanwhile: a row per case and target.
 */
import autocannon from 'autocannon';
import pg from 'pg';
import { bareCase } from './hot-paths-cases.js';
import {
  CONNECTIONS,
  DURATION,
  WARMUP,
  WORKERS,
  type Case,
  type OnDemandTarget,
  type Row,
  type Target,
} from './hot-paths-settings.js';
import type { Targets } from './hot-paths-targets.js';
import { memory, stopChild, waitUntilUp } from './lifecycle.js';
import { treeCpuSeconds, treeRss } from './proc-stats.js';

async function drive(url: string, c: Case, duration: number): Promise<autocannon.Result> {
  return autocannon({
    url,
    connections: CONNECTIONS,
    duration,
    headers: c.headers,
    requests: c.requests,
  });
}

/**
 * Runs fn while writes of reports notify nothing (db/migrations/10_report_change_notify.sql's trigger
 * disabled): the service's report cache may go stale meanwhile, so only writes are driven then and the
 * processes are not read from again.
 */
async function withoutReportNotifications(url: string, fn: () => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('ALTER TABLE reports DISABLE TRIGGER reports_notify_changed');
    try {
      await fn();
    } finally {
      await client.query('ALTER TABLE reports ENABLE TRIGGER reports_notify_changed');
    }
  } finally {
    await client.end();
  }
}

export class CaseRunner {
  readonly rows: Row[] = [];
  /** High-water marks of the processes started for their runs, taken before each was stopped. */
  readonly stoppedHwm = new Map<Target, number>();
  private readonly targets: Targets;
  private readonly databaseUrl: string;
  private readonly postmaster: number;
  private readonly smallHeaders: Record<string, string>;

  /** postmaster: the pid of PostgreSQL's postmaster, whose CPU (its backends' too) each row reports. */
  constructor(targets: Targets, databaseUrl: string, postmaster: number, smallHeaders: Record<string, string>) {
    this.targets = targets;
    this.databaseUrl = databaseUrl;
    this.postmaster = postmaster;
    this.smallHeaders = smallHeaders;
  }

  /**
   * Bare Express at the start and at the end: the mean is the yardstick, the spread shows the drift.
   * Compared cases alternate which of the two implementations goes first, so that neither always
   * runs on the warmer (or the more loaded) machine.
   */
  async runAll(cases: Case[]): Promise<void> {
    await this.run(bareCase, 'bare');
    let serviceFirst = true;
    for (const c of cases) {
      const order: Target[] = !c.compared
        ? ['service']
        : serviceFirst
          ? ['service', 'straightforward']
          : ['straightforward', 'service'];
      if (c.compared) serviceFirst = !serviceFirst;
      for (const target of order) await this.run(c, target);
      // Right after the single process, so that the two see the same machine.
      if (WORKERS > 1) await this.runStarted(c, 'workers');
      if (!c.compared) continue;
      await this.run(c, 'floor');
      await this.runStarted(c, 'capped');
      if (c.name.startsWith('POST')) {
        await withoutReportNotifications(this.databaseUrl, () => this.run(c, 'unnotified'));
      }
    }
    await this.run(bareCase, 'bare');
  }

  /** Drives c against target (after WARMUP seconds of it), adds its row and prints it. */
  private async run(c: Case, target: Target): Promise<void> {
    const url = this.targets.urls[target];
    const pid = this.targets.pids[target];
    if (WARMUP > 0) await drive(url, c, WARMUP);
    let peak = treeRss(pid);
    const sampler = setInterval(() => (peak = Math.max(peak, treeRss(pid))), 200);
    const cpuBefore = { server: treeCpuSeconds(pid), postgres: treeCpuSeconds(this.postmaster), at: Date.now() };
    const result = await drive(url, c, DURATION);
    const elapsed = (Date.now() - cpuBefore.at) / 1000;
    const serverCpuPct = ((treeCpuSeconds(pid) - cpuBefore.server) / elapsed) * 100;
    const postgresCpuPct = ((treeCpuSeconds(this.postmaster) - cpuBefore.postgres) / elapsed) * 100;
    clearInterval(sampler);
    const row: Row = {
      case: c.name,
      target,
      requestsPerSec: result.requests.average,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      ofBare: null,
      errors: result.errors + result.timeouts + result.non2xx,
      requests: result.requests.total,
      peakRssMb: Math.max(peak, treeRss(pid)),
      serverCpuPct,
      postgresCpuPct,
    };
    this.rows.push(row);
    console.log(
      `${c.name} (${target}): ${row.requestsPerSec.toFixed(0)} req/s, p99 ${row.p99Ms} ms, errors ${row.errors}, ` +
        `CPU node ${serverCpuPct.toFixed(0)}%, pg ${postgresCpuPct.toFixed(0)}%`,
    );
  }

  /** Starts target, drives c against it, and stops it again. */
  private async runStarted(c: Case, target: OnDemandTarget): Promise<void> {
    const child = this.targets.onDemand[target]();
    this.targets.pids[target] = child.pid!;
    try {
      await waitUntilUp(`${this.targets.urls[target]}/auth`, this.smallHeaders);
      await waitUntilUp(`${this.targets.urls[target]}/readyz`);
      await this.run(c, target);
      this.stoppedHwm.set(target, Math.max(this.stoppedHwm.get(target) ?? 0, memory(child.pid!).hwm));
    } finally {
      await stopChild(child);
    }
  }
}
