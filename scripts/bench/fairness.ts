/**
 * `npm run bench:fairness`: does one company's flood take the service from another?
 *
 * A fresh embedded PostgreSQL and the production build of the service (one process), with companies A
 * and B (fairness-setup.ts). B sends a steady 20 requests a second, open-loop, from a process of its
 * own (steady-client.ts): alone first, then under each of A's floods (fairness-floods.ts, driven from
 * this process) in turn, each after a gap of B alone again. B alone is all its answers alone together,
 * so that it spans the same stretch of the machine's time as the floods. Prints B's p50/p99 alone and
 * under each flood, what each phase used of the machine (CPU of the service, PostgreSQL and A's load
 * generator; the service's peak RSS), and "every ratio within 3×, no 5xx for B: met/missed"; writes the
 * same figures as JSON.
 *
 * Environment (optional): BENCH_FAIRNESS_DURATION (seconds per phase, default 30), BENCH_FAIRNESS_WARMUP
 * (seconds of B alone first, not counted, in which B uses each of its operations, default 2),
 * BENCH_FAIRNESS_GAP (seconds of B alone before each flood after the first, default 10; 0: none),
 * BENCH_FAIRNESS_ONLY (comma-separated flood names), BENCH_FAIRNESS_OUT (default bench-fairness.json).
 */
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FLOODS, type Flood, type Statuses } from './fairness-floods.js';
import { MAX_RATIO, phaseRow, printReport, type PhaseRow } from './fairness-report.js';
import { settle, setUpStage, type Stage } from './fairness-setup.js';
import { machine, ROOT, rssSampler, runBench, runScript, treeCpuSeconds } from './lifecycle.js';
import type { SteadyConfig, SteadyResult } from './steady-client.js';

const env = process.env;
const DURATION = Number(env.BENCH_FAIRNESS_DURATION ?? 30);
const WARMUP = Number(env.BENCH_FAIRNESS_WARMUP ?? 2);
const GAP = Number(env.BENCH_FAIRNESS_GAP ?? 10);
const OUT = path.resolve(ROOT, env.BENCH_FAIRNESS_OUT ?? 'bench-fairness.json');
const ONLY = env.BENCH_FAIRNESS_ONLY?.split(',').map((s) => s.trim());
const RATE = 20;
const sum = (xs: number[]) => xs.reduce((x, y) => x + y, 0);

const ALONE: Flood = { name: 'alone', label: 'nothing (B alone)', run: async () => ({}) };

function steadyConfig(stage: Stage, phase: string, durationSec: number): SteadyConfig {
  const { b } = stage;
  const [restIdPrefix, appToken] = [`b-${phase}-${Date.now()}`, stage.appToken];
  return {
    ...{
      baseUrl: stage.baseUrl,
      key: b.key,
      ids: b.ids,
      inspectorEmail: b.inspectorEmail,
      rate: RATE,
      durationSec,
      restIdPrefix,
    },
    // The warm-up sends B's application API calls too, so that no phase pays for their first use.
    webhook: ['slow-webhook', 'warmup'].includes(phase)
      ? { companyId: b.companyId, reportId: b.publishReportId, appToken, everyMs: 1_000 }
      : undefined,
  };
}

/** B's steady client for the phase, with flood (started once B is sending): A's statuses and B's answers. */
function steady(stage: Stage, flood: Flood, durationSec: number) {
  const config = { STEADY_CONFIG: JSON.stringify(steadyConfig(stage, flood.name, durationSec)) };
  return runScript<SteadyResult>('steady-client.ts', config, () => flood.run(stage, durationSec));
}

/** A phase of durationSec: B's row (its ratio set once B alone is known), and B's answers. */
async function phase(stage: Stage, flood: Flood, durationSec = DURATION) {
  const sampler = rssSampler(stage.servicePid);
  const cpu = () => [treeCpuSeconds(stage.servicePid), treeCpuSeconds(stage.postmaster), process.cpuUsage()] as const;
  const [from, before] = [Date.now(), cpu()];
  const { during, result } = await steady(stage, flood, durationSec);
  const [to, after] = [Date.now(), cpu()];
  const pct = (seconds: number) => (seconds / ((to - from) / 1000)) * 100;
  const generator = process.cpuUsage(before[2]);
  const cpuPct = {
    service: pct(after[0] - before[0]),
    postgres: pct(after[1] - before[1]),
    generator: pct((generator.user + generator.system) / 1e6),
  };
  const usage = { cpuPct, peakRssMb: sampler.stop(), durationSec };
  const row = phaseRow(flood, result, during as Statuses, usage);
  console.log(
    `${flood.name}${durationSec === DURATION ? '' : ` ${durationSec} s`}: B p50 ${row.b.p50Ms.toFixed(1)} ms, ` +
      `p99 ${row.b.p99Ms.toFixed(1)} ms, 5xx ${row.bFailed}, 429 ${row.b429}`,
  );
  await settle(stage);
  return { row, result };
}

/** Every flood in turn, each after B alone (the first for DURATION, the others for GAP): B alone's pooled row, then each flood's. */
async function phases(stage: Stage, floods: Flood[]): Promise<PhaseRow[]> {
  const alone = [await phase(stage, ALONE)];
  const rows: PhaseRow[] = [];
  for (const [i, flood] of floods.entries()) {
    if (i > 0 && GAP > 0) alone.push(await phase(stage, ALONE, GAP));
    rows.push((await phase(stage, flood)).row);
  }
  // B alone's CPU is its first stretch's; its latency, all its stretches' answers together.
  const label = alone.length > 1 ? `nothing (B alone, ${alone.length} stretches)` : ALONE.label;
  const samples = alone.flatMap((a) => a.result.samples);
  const usage = { ...alone[0]!.row, peakRssMb: Math.max(...alone.map((a) => a.row.peakRssMb)) };
  const pooled = phaseRow(
    { ...ALONE, label },
    { samples },
    {},
    { ...usage, durationSec: sum(alone.map((a) => a.row.durationSec)) },
  );
  return [pooled, ...rows.map((row) => ({ ...row, p99Ratio: row.b.p99Ms / pooled.b.p99Ms }))];
}

async function main(): Promise<void> {
  const unknown = ONLY?.filter((name) => !FLOODS.some((f) => f.name === name)) ?? [];
  if (unknown.length > 0)
    throw new Error(
      `BENCH_FAIRNESS_ONLY: unknown ${unknown.join(', ')}; floods: ${FLOODS.map((f) => f.name).join(', ')}`,
    );
  const floods = FLOODS.filter((f) => !ONLY || ONLY.includes(f.name));
  const started = Date.now();
  const stage = await setUpStage();
  await settle(stage); // the seeding's writes too
  console.log(`warming up B alone for ${WARMUP} s`);
  await runScript(
    'steady-client.ts',
    { STEADY_CONFIG: JSON.stringify(steadyConfig(stage, 'warmup', WARMUP)) },
    async () => ({}),
  );
  const rows = await phases(stage, floods);
  const verdict = printReport(rows, os.cpus().length);
  const contractErrors = stage.receivers.flatMap((r) => r.contractErrors);
  if (contractErrors.length > 0) console.log(`webhooks not matching the contract: ${contractErrors.length}`);
  console.log(`machine: ${machine()}; ${DURATION} s per phase, B at ${RATE} req/s`);
  const settings = {
    durationSec: DURATION,
    gapSec: GAP,
    warmupSec: WARMUP,
    bRequestsPerSec: RATE,
    maxRatio: MAX_RATIO,
  };
  const report = {
    date: new Date().toISOString(),
    machine: machine(),
    settings,
    rows,
    verdict,
    totalSec: (Date.now() - started) / 1000,
  };
  await writeFile(OUT, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`results in ${path.relative(process.cwd(), OUT) || OUT}`);
}

runBench(main);
