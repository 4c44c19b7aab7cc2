// Company B's steady client, in a process of its own so the benchmark's load does not delay it:
// open-loop (one request every 1000/rate ms, responded to or not, so queueing shows); prints each
// request's latency and status as one JSON line (configured by STEADY_CONFIG).

import { setTimeout as sleep } from 'node:timers/promises';
import { benchReport } from './seed.js';

/** B's key and the reports it reads; its creates' restIds are `${restIdPrefix}-${n}`. */
export interface SteadyConfig {
  baseUrl: string;
  key: string;
  ids: string[];
  inspectorEmail: string;
  rate: number;
  durationSec: number;
  restIdPrefix: string;
  webhook?: { companyId: string; reportId: string; appToken: string; everyMs: number };
  /** Publishes in place of the partner mix: report n of reportIds, delivery failures refused (502). */
  publishes?: { companyId: string; reportIds: string[]; appToken: string };
}

export interface Sample {
  op: 'get' | 'list' | 'create' | 'webhook-test' | 'publish';
  /** Milliseconds from sending to the end of the answer's body. */
  ms: number;
  status: number;
  /** The body of a 5xx answer (its first 300 characters). */
  error?: string;
}

export type SteadyResult = { samples: Sample[] };

/** B's p99 under another company's load may be at most this many times its p99 alone. */
export const MAX_RATIO = 3;

export function latency(samples: Sample[]): { count: number; p50Ms: number; p99Ms: number; maxMs: number } {
  const ms = samples.map((s) => s.ms).sort((x, y) => x - y);
  const at = (p: number) => ms[Math.min(ms.length - 1, Math.ceil((p / 100) * ms.length) - 1)] ?? NaN;
  return { count: ms.length, p50Ms: at(50), p99Ms: at(99), maxMs: ms.at(-1) ?? NaN };
}

async function timed(op: Sample['op'], url: string, init: RequestInit = {}): Promise<Sample> {
  const start = performance.now();
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
    const body = await res.text();
    const sample: Sample = { op, ms: performance.now() - start, status: res.status };
    return res.status >= 500 ? { ...sample, error: body.slice(0, 300) } : sample;
  } catch {
    return { op, ms: performance.now() - start, status: 0 };
  }
}

const post = (headers: Record<string, string>, body: unknown): RequestInit => ({
  method: 'POST',
  headers: { ...headers, 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

function partnerRequest({ baseUrl, key, ids, restIdPrefix, inspectorEmail }: SteadyConfig, n: number) {
  const headers = { 'x-api-key': key };
  if (n % 3 === 0) return timed('get', `${baseUrl}/reports/${ids[n % ids.length]}`, { headers });
  if (n % 3 === 1) return timed('list', `${baseUrl}/reports?limit=20`, { headers });
  return timed('create', `${baseUrl}/reports/new`, post(headers, benchReport(`${restIdPrefix}-${n}`, inspectorEmail)));
}

/** The n-th publish of `publishes`: its own report, answered once its webhook is delivered. */
function publishRequest(config: SteadyConfig, n: number): Promise<Sample> {
  const { companyId, reportIds, appToken } = config.publishes!;
  const body = {
    publishedUrl: `https://reports.example.com/r/${n}`,
    notifyIntegration: true,
    whenDeliveryFails: 'fail',
  };
  const url = `${config.baseUrl}/internal/companies/${companyId}/reports/${reportIds[n]}/publish`;
  return timed('publish', url, post({ authorization: `Bearer ${appToken}` }, body));
}

function webhookRequest(config: SteadyConfig, n: number): Promise<Sample> {
  const { companyId, reportId, appToken } = config.webhook!;
  const [company, auth] = [
    `${config.baseUrl}/internal/companies/${companyId}`,
    { authorization: `Bearer ${appToken}` },
  ];
  if (n % 2 === 0) return timed('webhook-test', `${company}/webhook/test`, post(auth, {}));
  const body = { publishedUrl: `https://reports.example.com/r/${n}`, notifyIntegration: true };
  return timed('publish', `${company}/reports/${reportId}/publish`, post(auth, body));
}

/** Sends request(n) at start + n × intervalMs for n = 0, 1, … until durationSec, without waiting for answers. */
async function openLoop(intervalMs: number, durationSec: number, request: (n: number) => Promise<Sample>) {
  const start = performance.now();
  const pending: Promise<Sample>[] = [];
  for (let n = 0; n * intervalMs < durationSec * 1000; n++) {
    const wait = start + n * intervalMs - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(request(n));
  }
  return pending;
}

async function main(config: SteadyConfig): Promise<SteadyResult> {
  await timed('get', `${config.baseUrl}/reports/${config.ids[0]}`, { headers: { 'x-api-key': config.key } });
  process.stdout.write('ready\n');
  const request = config.publishes ? publishRequest : partnerRequest;
  const loops = [openLoop(1000 / config.rate, config.durationSec, (n) => request(config, n))];
  if (config.webhook)
    loops.push(openLoop(config.webhook.everyMs, config.durationSec, (n) => webhookRequest(config, n)));
  return { samples: await Promise.all((await Promise.all(loops)).flat()) };
}

if (process.env.STEADY_CONFIG) {
  main(JSON.parse(process.env.STEADY_CONFIG) as SteadyConfig)
    .then((result) => process.stdout.write(`${JSON.stringify(result)}\n`))
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
