// `npm run bench:fairness`: does one company's flood take the service from another? Company B's steady
// client runs alone, then under each of A's floods, and the latencies are compared.
// Environment (optional): BENCH_FAIRNESS_DURATION, _WARMUP, _GAP (seconds), _ONLY (flood names), _OUT.

import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FLOODS, type Flood, type Statuses } from './fairness-floods.js';
import { settle, setUpStage, type Stage } from './fairness-setup.js';
import { formatTable, machine, ROOT, runBench, runScript, treeCpuSeconds } from './lifecycle.js';
import { latency, MAX_RATIO, type Sample, type SteadyConfig, type SteadyResult } from './steady-client.js';

const env = process.env;
const DURATION = Number(env.BENCH_FAIRNESS_DURATION ?? 30);
const WARMUP = Number(env.BENCH_FAIRNESS_WARMUP ?? 2);
const GAP = Number(env.BENCH_FAIRNESS_GAP ?? 10);
const OUT = path.resolve(ROOT, env.BENCH_FAIRNESS_OUT ?? 'bench-fairness.json');
const ONLY = env.BENCH_FAIRNESS_ONLY?.split(',').map((s) => s.trim());
const RATE = 20;

const ALONE: Flood = { name: 'alone', label: 'nothing (B alone)', run: async () => ({}) };

/** A phase: what A did, B's answers, and the CPU it took (in percent of one core). */
interface Phase {
  flood: Flood;
  samples: Sample[];
  aStatuses: Statuses;
  cpuPct: { service: number; postgres: number; generator: number };
  durationSec: number;
}

const partner = (s: Sample) => ['get', 'list', 'create'].includes(s.op);

/** B's figures of a phase: its partner mix's latency (get, list, create); its requests answered 5xx or not at all. */
function figures({ flood, samples, aStatuses, ...usage }: Phase, alone?: { p99Ms: number }) {
  const failed = samples.filter((s) => s.status >= 500 || s.status === 0);
  const b = latency(samples.filter(partner));
  return {
    ...{
      flood: flood.name,
      label: flood.label,
      b,
      p99Ratio: alone ? b.p99Ms / alone.p99Ms : null,
      aStatuses,
      ...usage,
    },
    ...{ bFailed: failed.length, b429: samples.filter((s) => s.status === 429).length },
    bErrors: [...new Set(failed.filter((s) => s.error).map((s) => `${s.op} ${s.status}: ${s.error}`))],
  };
}
type Row = ReturnType<typeof figures>;

/** B's steady client for a phase, with the flood started once B is sending: A's statuses and B's answers. */
function steady(stage: Stage, flood: Flood, durationSec: number) {
  const { b, baseUrl, appToken } = stage;
  const config: SteadyConfig = {
    ...{ baseUrl, key: b.key, ids: b.ids, inspectorEmail: b.inspectorEmail, rate: RATE, durationSec },
    restIdPrefix: `b-${flood.name}-${Date.now()}`,
    // The warm-up sends B's application API calls too, so that no phase pays for their first use.
    webhook: ['slow-webhook', 'warmup'].includes(flood.name)
      ? { companyId: b.companyId, reportId: b.publishReportId, appToken, everyMs: 1_000 }
      : undefined,
  };
  return runScript<SteadyResult>('steady-client.ts', { STEADY_CONFIG: JSON.stringify(config) }, () =>
    flood.run(stage, durationSec),
  );
}

async function phase(stage: Stage, flood: Flood, durationSec = DURATION): Promise<Phase> {
  const cpu = () => [treeCpuSeconds(stage.servicePid), treeCpuSeconds(stage.postmaster), process.cpuUsage()] as const;
  const [from, before] = [Date.now(), cpu()];
  const { during, result } = await steady(stage, flood, durationSec);
  const [seconds, after, generator] = [(Date.now() - from) / 1000, cpu(), process.cpuUsage(before[2])];
  const cpuPct = {
    service: ((after[0] - before[0]) / seconds) * 100,
    postgres: ((after[1] - before[1]) / seconds) * 100,
    generator: ((generator.user + generator.system) / 1e6 / seconds) * 100,
  };
  const b = latency(result.samples.filter(partner));
  console.log(`${flood.name} ${durationSec} s: B p50 ${b.p50Ms.toFixed(1)} ms, p99 ${b.p99Ms.toFixed(1)} ms`);
  await settle(stage);
  const [samples, aStatuses] = [result.samples, during as Statuses];
  return { flood, samples, aStatuses, cpuPct, durationSec };
}

/**
 * Every flood in turn, each after B alone (the first for DURATION, the others for GAP). B alone is all
 * its stretches' answers together (its CPU, the first stretch's); each flood's p99 is set against it.
 */
async function phases(stage: Stage, floods: Flood[]): Promise<Row[]> {
  const [alone, flooded] = [[await phase(stage, ALONE)], [] as Phase[]];
  for (const [i, flood] of floods.entries()) {
    if (i > 0 && GAP > 0) alone.push(await phase(stage, ALONE, GAP));
    flooded.push(await phase(stage, flood));
  }
  const pooled = figures({
    ...alone[0]!,
    flood: { ...ALONE, label: `nothing (B alone, ${alone.length} stretches)` },
    samples: alone.flatMap((a) => a.samples),
    durationSec: alone.reduce((sum, a) => sum + a.durationSec, 0),
  });
  return [pooled, ...flooded.map((f) => figures(f, pooled.b))];
}

function print(rows: Row[], met: boolean): void {
  const statusText = (s: Statuses) => Object.entries(s).map(([status, n]) => `${status}×${n}`);
  const header = ['flood', 'A does', 'B p50 ms', 'B p99 ms', 'p99 / alone', 'B max ms', 'B 5xx', 'B 429'];
  header.push("A's statuses", 'A req/s', 'CPU% svc/pg/A');
  const lines = rows.map(({ b, p99Ratio, aStatuses, cpuPct, ...r }) => [
    ...[r.flood, r.label, b.p50Ms.toFixed(1), b.p99Ms.toFixed(1), p99Ratio ? `${p99Ratio.toFixed(1)}×` : ''],
    ...[b.maxMs.toFixed(0), String(r.bFailed), String(r.b429), statusText(aStatuses).join(' ') || '-'],
    p99Ratio ? (Object.values(aStatuses).reduce((sum, n) => sum + n, 0) / r.durationSec).toFixed(0) : '',
    [cpuPct.service, cpuPct.postgres, cpuPct.generator].map((p) => p.toFixed(0)).join('/'),
  ]);
  console.log(`\n${formatTable(header, lines)}`);
  for (const r of rows) for (const e of r.bErrors) console.log(`B's 5xx under ${r.flood}: ${e}`);
  console.log(`every ratio within ${MAX_RATIO}×, no 5xx for B: ${met ? 'met' : 'missed'}`);
  const cores = os.cpus().length;
  console.log(
    `A's load generator (CPU% A), B's client and PostgreSQL share these ${cores} cores with the service: where ` +
      `svc + pg + A nears ${cores * 100}%, B's latency includes waiting for a core, as on any machine that small.`,
  );
}

async function main(): Promise<void> {
  const started = Date.now();
  const stage = await setUpStage();
  await settle(stage); // the seeding's writes too
  console.log(`warming up B alone for ${WARMUP} s`);
  await steady(stage, { ...ALONE, name: 'warmup' }, WARMUP);
  const rows = await phases(stage, ONLY ? FLOODS.filter((f) => ONLY.includes(f.name)) : FLOODS);
  const ratiosMet = rows.every((r) => r.p99Ratio === null || r.p99Ratio <= MAX_RATIO);
  const verdict = { ratiosMet, no5xx: rows.every((r) => r.bFailed === 0) };
  print(rows, verdict.ratiosMet && verdict.no5xx);
  const contractErrors = stage.receivers.flatMap((r) => r.contractErrors).length;
  console.log(`webhooks not matching the contract: ${contractErrors}; machine: ${machine()}`);
  const settings = { durationSec: DURATION, gapSec: GAP, warmupSec: WARMUP, bRequestsPerSec: RATE };
  const report = { date: new Date().toISOString(), machine: machine(), settings, rows, verdict };
  await writeFile(OUT, `${JSON.stringify({ ...report, totalSec: (Date.now() - started) / 1000 }, null, 2)}\n`);
}

runBench(main);
