/**
 * Company B's steady client for `npm run bench:fairness`, run as a process of its own (so that a
 * flood driven from the benchmark's process does not delay it): open-loop, one request every
 * 1000/rate ms at fixed times whether or not the earlier ones have answered (so queueing shows),
 * for durationSec seconds, cycling through GET /reports/{id}, GET /reports?limit=20 and POST
 * /reports/new with a restId never used before. With `webhook`, it also alternates a test delivery
 * and a publish of one report every `everyMs`. With `publishes`, it sends publishes instead of the
 * partner mix, at the same rate, each of a report of its own (`npm run bench:deliveries`). Each request's latency (from when it was sent) and
 * status (0: no answer within 30 s or a network error) are printed as one JSON line at the end.
 *
 *   STEADY_CONFIG='<SteadyConfig as JSON>' node --import tsx scripts/bench/steady-client.ts
 *
 * It reads one of B's reports first, not counted, then prints `ready`; the benchmark starts the flood
 * when it reads it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { benchReport } from './seed.js';

export interface SteadyConfig {
  baseUrl: string;
  key: string;
  /** B's report ids to read. */
  ids: string[];
  inspectorEmail: string;
  /** Requests per second. */
  rate: number;
  durationSec: number;
  /** restIds of the creates: `${restIdPrefix}-${n}`, unique per run. */
  restIdPrefix: string;
  webhook?: { companyId: string; reportId: string; appToken: string; everyMs: number };
  /** Publishes in place of the partner mix: report n of reportIds (each once), delivery failures refused (502). */
  publishes?: { companyId: string; reportIds: string[]; appToken: string };
}

export interface Sample {
  op: 'get' | 'list' | 'create' | 'webhook-test' | 'publish';
  /** Milliseconds from sending to the end of the answer's body. */
  ms: number;
  /** When it was sent, in ms from the start of its phase. */
  atMs: number;
  status: number;
  /** The body of a 5xx answer (its first 300 characters). */
  error?: string;
}

export interface SteadyResult {
  samples: Sample[];
  /** How late the client itself sent its latest request, in ms (its own scheduling, not the service). */
  maxSendLagMs: number;
}

const TIMEOUT_MS = 30_000;

/** The time origin of atMs: when this client started sending. */
let phaseStart = performance.now();

async function timed(op: Sample['op'], url: string, init: RequestInit): Promise<Sample> {
  const start = performance.now();
  const atMs = Math.round(start - phaseStart);
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
    const body = await res.text();
    const sample: Sample = { op, ms: performance.now() - start, atMs, status: res.status };
    return res.status >= 500 ? { ...sample, error: body.slice(0, 300) } : sample;
  } catch {
    return { op, ms: performance.now() - start, atMs, status: 0 };
  }
}

/** The n-th request of the partner mix. */
function partnerRequest(config: SteadyConfig, n: number): Promise<Sample> {
  const headers = { 'x-api-key': config.key };
  switch (n % 3) {
    case 0:
      return timed('get', `${config.baseUrl}/reports/${config.ids[n % config.ids.length]}`, { headers });
    case 1:
      return timed('list', `${config.baseUrl}/reports?limit=20`, { headers });
    default:
      return timed('create', `${config.baseUrl}/reports/new`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(benchReport(`${config.restIdPrefix}-${n}`, config.inspectorEmail)),
      });
  }
}

/** The n-th publish of `publishes`: its own report, as an inspector publishes it with the webhook's delivery. */
function publishRequest(config: SteadyConfig, n: number): Promise<Sample> {
  const { companyId, reportIds, appToken } = config.publishes!;
  return timed('publish', `${config.baseUrl}/internal/companies/${companyId}/reports/${reportIds[n]}/publish`, {
    method: 'POST',
    headers: { authorization: `Bearer ${appToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      publishedUrl: `https://reports.example.com/r/${n}`,
      notifyIntegration: true,
      whenDeliveryFails: 'fail',
    }),
  });
}

/** The n-th call to the application API: a test delivery, then a publish, in turn. */
function webhookRequest(config: SteadyConfig, n: number): Promise<Sample> {
  const { companyId, reportId, appToken } = config.webhook!;
  const headers = { authorization: `Bearer ${appToken}`, 'content-type': 'application/json' };
  const company = `${config.baseUrl}/internal/companies/${companyId}`;
  if (n % 2 === 0) return timed('webhook-test', `${company}/webhook/test`, { method: 'POST', headers, body: '{}' });
  return timed('publish', `${company}/reports/${reportId}/publish`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ publishedUrl: `https://reports.example.com/r/${n}`, notifyIntegration: true }),
  });
}

/** Sends request(n) at start + n × intervalMs for n = 0, 1, … until durationSec, without waiting for answers. */
async function openLoop(
  intervalMs: number,
  durationSec: number,
  request: (n: number) => Promise<Sample>,
): Promise<{ pending: Promise<Sample>[]; maxLagMs: number }> {
  const start = performance.now();
  const pending: Promise<Sample>[] = [];
  let maxLagMs = 0;
  for (let n = 0; n * intervalMs < durationSec * 1000; n++) {
    const due = start + n * intervalMs;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    maxLagMs = Math.max(maxLagMs, performance.now() - due);
    pending.push(request(n));
  }
  return { pending, maxLagMs };
}

async function warmUp(config: SteadyConfig): Promise<void> {
  const res = await fetch(`${config.baseUrl}/reports/${config.ids[0]}`, {
    headers: { 'x-api-key': config.key },
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  await res.text();
}

export async function runSteady(config: SteadyConfig): Promise<SteadyResult> {
  phaseStart = performance.now();
  const request = config.publishes ? publishRequest : partnerRequest;
  const loops = [openLoop(1000 / config.rate, config.durationSec, (n) => request(config, n))];
  if (config.webhook) {
    loops.push(openLoop(config.webhook.everyMs, config.durationSec, (n) => webhookRequest(config, n)));
  }
  const done = await Promise.all(loops);
  const samples = await Promise.all(done.flatMap((l) => l.pending));
  return { samples, maxSendLagMs: Math.max(...done.map((l) => l.maxLagMs)) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const config = JSON.parse(process.env.STEADY_CONFIG ?? '') as SteadyConfig;
  // One read not counted first: this process's first fetch loads its HTTP client and opens its
  // connection (about 20 ms), which no phase should count as the service's.
  warmUp(config)
    .then(() => process.stdout.write('ready\n'))
    .then(() => runSteady(config))
    .then((result) => process.stdout.write(`${JSON.stringify(result)}\n`))
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
