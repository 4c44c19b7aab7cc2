/**
 * `npm run bench:fairness`: does one company's flood take the service from another?
 *
 * Starts a fresh embedded PostgreSQL and the production build of the service (one process), with
 * companies A and B (fairness-setup.ts). Company B sends a steady 20 requests a second, open-loop
 * (steady-client.ts, a process of its own), alone first, then under each of company A's floods
 * (fairness-floods.ts) in turn, each for the same time and each after a gap of B alone again; the
 * service's RSS is sampled meanwhile, and
 * the machine's disk stalls are measured by a probe of their own (disk-probe.ts).
 * Prints B's p50/p99 alone and under each flood side by side, with "every ratio within 3×, no 5xx
 * for B: met/missed", and writes the same figures as JSON.
 *
 * Environment (all optional): BENCH_FAIRNESS_DURATION (seconds per phase, default 30: B's p99 is then
 * the 6th slowest of 600 answers, not the 2nd of 200, so one stall alone does not decide a row),
 * BENCH_FAIRNESS_WARMUP (seconds of B alone before the baseline, not counted, in which B uses every
 * operation of its phases once, so that no phase pays a process's first use of one; default 2),
 * BENCH_FAIRNESS_GAP (seconds of B alone again before each flood after the first, default 10; 0: none).
 * B alone is the pooled answers of the first phase and of the gaps: the same code's B alone p99 over one
 * 30 s phase measured 10.2-16.6 ms from run to run, which moved every ratio of a run by as much; pooled
 * over the whole run, it is measured across the same stretch of the machine's time as the floods.
 * BENCH_FAIRNESS_STALL_RUNS (default 3: a phase, B alone's too, is run again while the disk probe saw a
 * stall of 50 ms or more in it, up to this many runs in all; the table says how many were set aside; a
 * stretch of B alone stalled in every run is left out of the baseline),
 * BENCH_FAIRNESS_PRIORITY (default -5: the priority of the service's main thread and of B's client,
 * above PostgreSQL's, where A's floods run niced; see setPriorities in fairness-setup.ts),
 * BENCH_FAIRNESS_OUT (default bench-fairness.json), BENCH_FAIRNESS_ONLY (comma-separated flood
 * names: list, create, list-max, list-max-varying, unknown-key, row-lock, slow-webhook, big-bodies),
 * BENCH_CPU_PROF (a directory: the service writes a V8 CPU profile there when it stops),
 * BENCH_NODE_ARGS (more options for the service's node, space-separated: e.g. `--import <a module that
 * logs the event loop's delay to stderr>`; the service's stderr is shown).
 */
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { FLOODS, type Flood, type Statuses } from './fairness-floods.js';
import { diskStalled, isPartner, latency, phaseRow, printReport, MAX_RATIO, type PhaseRow } from './fairness-report.js';
import { diskProbe, setPriorities, settle, setUpStage, type Stage } from './fairness-setup.js';
import { cleanUpOnSignals, ROOT, runBench, startChild } from './lifecycle.js';
import { rssSampler } from './proc-stats.js';
import type { SteadyConfig, SteadyResult } from './steady-client.js';

const env = process.env;
const DURATION = Number(env.BENCH_FAIRNESS_DURATION ?? 30);
const WARMUP = Number(env.BENCH_FAIRNESS_WARMUP ?? 2);
const GAP = Number(env.BENCH_FAIRNESS_GAP ?? 10);
const STALL_RUNS = Math.max(1, Number(env.BENCH_FAIRNESS_STALL_RUNS ?? 3));
const OUT = path.resolve(ROOT, env.BENCH_FAIRNESS_OUT ?? 'bench-fairness.json');
const ONLY = env.BENCH_FAIRNESS_ONLY?.split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const RATE = 20;

/** The priority of B's client (and the disk probe's), once set: undefined when A's floods could not be niced. */
let clientPriority: number | undefined;

/** Runs B's steady client as a process; calls started() once it is sending, answers its result. */
async function steady(config: SteadyConfig, started: () => Promise<Statuses>) {
  const child = startChild(
    'steady',
    ['--import', 'tsx', 'scripts/bench/steady-client.ts'],
    { STEADY_CONFIG: JSON.stringify(config) },
    'pipe',
  );
  // This process (A's floods) runs niced, B's client above PostgreSQL (see setPriorities).
  if (clientPriority !== undefined) os.setPriority(child.pid!, clientPriority);
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done || first.value !== 'ready') throw new Error('the steady client did not start');
  const [aStatuses, last] = await Promise.all([started(), lines.next()]);
  if (last.done) throw new Error('the steady client ended without its result');
  return { aStatuses, result: JSON.parse(last.value) as SteadyResult };
}

function steadyConfig(stage: Stage, phase: string, durationSec: number): SteadyConfig {
  const { b } = stage;
  return {
    baseUrl: stage.baseUrl,
    key: b.key,
    ids: b.ids,
    inspectorEmail: b.inspectorEmail,
    rate: RATE,
    durationSec,
    restIdPrefix: `b-${phase}-${Date.now()}`,
    // The warm-up sends B's application API calls too: what a process does once, at the first use of an
    // operation (compile its validators, load the notifier's HTTP client), is done there, by B.
    webhook: ['slow-webhook', 'warmup'].includes(phase)
      ? { companyId: b.companyId, reportId: b.publishReportId, appToken: stage.appToken, everyMs: 1_000 }
      : undefined,
  };
}

const ALONE = { name: 'alone', label: 'nothing (B alone)', run: async () => ({}) };

let disk: ReturnType<typeof diskProbe>;

/**
 * A phase of durationSec, run again (up to STALL_RUNS in all) while the disk probe saw a stall of
 * 50 ms or more in it (diskStalled): B's answers there measure the machine (whole stretches of 100-900 ms in
 * which every process waited, in phases with and without a flood), not how the service shares itself.
 * The row is the last run's, with the worst stall of each run set aside.
 */
async function phase(
  stage: Stage,
  flood: Flood,
  durationSec = DURATION,
): Promise<{ row: PhaseRow; result: SteadyResult }> {
  const setAside: number[] = [];
  for (;;) {
    const run = await onePhase(stage, flood, durationSec);
    if (!diskStalled(run.row) || setAside.length + 1 >= STALL_RUNS) return { ...run, row: { ...run.row, setAside } };
    const worst = Math.max(...run.row.diskStallsMs);
    setAside.push(worst);
    console.log(`  the disk stalled for ${worst} ms during ${flood.name}: running it again`);
  }
}

/** A phase of durationSec: B's row (its ratio set once B alone is known), and B's answers. */
async function onePhase(
  stage: Stage,
  flood: Flood,
  durationSec: number,
): Promise<{ row: PhaseRow; result: SteadyResult }> {
  const sampler = rssSampler(stage.servicePid);
  const from = Date.now();
  const { aStatuses, result } = await steady(steadyConfig(stage, flood.name, durationSec), () =>
    flood.run(stage, durationSec),
  );
  const diskStallsMs = disk.stallsMs(from, Date.now());
  const row = phaseRow(flood, result, { aStatuses, peakRssMb: sampler.stop(), durationSec, diskStallsMs });
  console.log(
    `${flood.name}${durationSec === DURATION ? '' : ` ${durationSec} s`}: B p50 ${row.b.p50Ms.toFixed(1)} ms, ` +
      `p99 ${row.b.p99Ms.toFixed(1)} ms, 5xx ${row.b5xx}, 429 ${row.b429}` +
      `, disk stalls ${diskStallsMs.length}${diskStallsMs.length ? ` (max ${Math.max(...diskStallsMs)} ms)` : ''}`,
  );
  const slowest = result.samples.toSorted((x, y) => y.ms - x.ms).slice(0, 4);
  console.log(`  B's slowest: ${slowest.map((s) => `${s.op} ${s.ms.toFixed(0)} ms at ${s.atMs} ms`).join(', ')}`);
  await settle(stage);
  return { row, result };
}

/**
 * Every flood in turn, each after B alone (the first for DURATION, the others for GAP): B alone's row
 * of all its answers together, then each flood's row with its p99 against that row's.
 */
async function phases(stage: Stage, floods: Flood[]): Promise<PhaseRow[]> {
  const alone = [await phase(stage, ALONE)];
  const rows: PhaseRow[] = [];
  for (const [i, flood] of floods.entries()) {
    if (i > 0 && GAP > 0) alone.push(await phase(stage, ALONE, GAP));
    rows.push((await phase(stage, flood)).row);
  }
  // A stretch whose every run stalled is left out of the baseline (it would raise it, every ratio lowered).
  const stalled = alone.filter((a) => diskStalled(a.row));
  const kept = stalled.length < alone.length ? alone.filter((a) => !stalled.includes(a)) : alone;
  const left = alone.length - kept.length;
  const pooled = phaseRow(
    {
      ...ALONE,
      label:
        alone.length > 1
          ? `nothing (B alone, ${kept.length} stretches${left ? `, ${left} left out for disk stalls` : ''})`
          : ALONE.label,
    },
    {
      samples: kept.flatMap((a) => a.result.samples),
      maxSendLagMs: Math.max(...kept.map((a) => a.result.maxSendLagMs)),
    },
    {
      aStatuses: {},
      peakRssMb: Math.max(...alone.map((a) => a.row.peakRssMb)),
      durationSec: alone.reduce((sum, a) => sum + a.row.durationSec, 0),
      diskStallsMs: kept.flatMap((a) => a.row.diskStallsMs),
      setAside: alone.flatMap((a) => a.row.setAside),
    },
  );
  if (alone.length > 1) {
    const gaps = latency(alone.slice(1).flatMap((a) => a.result.samples.filter(isPartner)));
    console.log(
      `B alone: p99 ${alone[0]!.row.b.p99Ms.toFixed(1)} ms in the first ${DURATION} s, ${gaps.p99Ms.toFixed(1)} ms ` +
        `in the ${alone.length - 1} gaps of ${GAP} s, ${pooled.b.p99Ms.toFixed(1)} ms in all (the baseline)`,
    );
  }
  return [pooled, ...rows.map((row) => ({ ...row, p99Ratio: row.b.p99Ms / pooled.b.p99Ms }))];
}

function selectedFloods(): Flood[] {
  if (!ONLY) return FLOODS;
  const unknown = ONLY.filter((name) => !FLOODS.some((f) => f.name === name));
  if (unknown.length > 0) {
    throw new Error(
      `BENCH_FAIRNESS_ONLY: unknown ${unknown.join(', ')}; floods: ${FLOODS.map((f) => f.name).join(', ')}`,
    );
  }
  return FLOODS.filter((f) => ONLY.includes(f.name));
}

async function main(): Promise<void> {
  cleanUpOnSignals();
  const floods = selectedFloods();
  const before = os.loadavg();
  const started = Date.now();
  const stage = await setUpStage();
  const priorities = setPriorities(stage.servicePid, Number(env.BENCH_FAIRNESS_PRIORITY ?? -5));
  clientPriority = priorities.client;
  disk = diskProbe(clientPriority);
  await settle(stage); // the seeding's writes too
  console.log(`warming up B alone for ${WARMUP} s`);
  await steady(steadyConfig(stage, 'warmup', WARMUP), async () => ({}));
  const rows = await phases(stage, floods);
  const load = { before, after: os.loadavg() };
  const result = printReport(rows, load, { durationSec: DURATION, rate: RATE, priorities: priorities.description });
  const contractErrors = [stage.receivers.slow, stage.receivers.fast].flatMap((r) => r.contractErrors);
  if (contractErrors.length > 0) console.log(`webhooks not matching the contract: ${contractErrors.length}`);
  const report = {
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, node: process.version, loadAverage: load },
    settings: {
      durationSec: DURATION,
      gapSec: GAP,
      warmupSec: WARMUP,
      bRequestsPerSec: RATE,
      maxRatio: MAX_RATIO,
      priorities: priorities.description,
    },
    rows,
    verdict: result,
    totalSec: (Date.now() - started) / 1000,
  };
  await writeFile(OUT, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`results in ${path.relative(process.cwd(), OUT) || OUT}`);
}

runBench(main);
