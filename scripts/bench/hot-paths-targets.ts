/**
 * The processes `npm run bench` drives, as child processes: the service as production runs it (built
 * by `npm run build`), bare Express answering a constant report, the straightforward implementation and
 * the floor, all the time; the service with workers and the service under a heap ceiling only while
 * driven. Also what the cases need from the running service: ids to read and a next-page link.
 */
import type { ChildProcess } from 'node:child_process';
import { freePort } from '../../src/local/index.js';
import { buildProduction } from '../production-build.js';
import { CPU_PROF_DIR, HEAP_CAP_ARGS, WORKERS, type OnDemandTarget, type Target } from './hot-paths-settings.js';
import { memory, serviceEnv, startChild, waitUntilUp } from './lifecycle.js';

/** What the cases read, taken from the running service. */
export interface Reference {
  /** The ids of the large company's first page. */
  ids: string[];
  /** The path of the large company's second page. */
  nextPath: string;
  /** One of the large company's reports, as the service answers it: bare Express's constant answer. */
  sampleReport: unknown;
}

export interface Targets {
  urls: Record<Target, string>;
  /** The pid of each target's process (0 for one started on demand, while it is not running). */
  pids: Record<Target, number>;
  /** Start the targets that run only while driven. */
  onDemand: Record<OnDemandTarget, () => ChildProcess>;
  /** The processes running all the time: bare Express, the straightforward implementation, the service, the floor. */
  running: ChildProcess[];
  serviceIdleRssMb: number;
  reference: Reference;
}

type Headers = Record<string, string>;

/** The service, up (and its RSS then, idle), with a V8 CPU profile on exit when BENCH_CPU_PROF is set. */
async function startService(databaseUrl: string, productionArgs: string[], smallHeaders: Headers) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const service = startChild(
    'service',
    [...(CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : []), ...productionArgs],
    serviceEnv(databaseUrl, port),
  );
  await waitUntilUp(`${url}/auth`, smallHeaders);
  await waitUntilUp(`${url}/readyz`);
  return { service, url, idleRssMb: memory(service.pid!).rss };
}

async function readReference(serviceUrl: string, largeHeaders: Headers): Promise<Reference> {
  const first = await fetch(`${serviceUrl}/reports?limit=20`, { headers: largeHeaders });
  const firstPage = (await first.json()) as { id: string }[];
  const nextPath = /<([^>]+)>;\s*rel="next"/.exec(first.headers.get('link') ?? '')?.[1];
  if (!nextPath) throw new Error('the large company\'s first page has no Link: rel="next"');
  const ids = firstPage.map((r) => r.id);
  const sample = await fetch(`${serviceUrl}/reports/${ids[0]}`, { headers: largeHeaders });
  return { ids, nextPath, sampleReport: (await sample.json()) as unknown };
}

/** Bare Express answering sampleReport, the straightforward implementation and the floor, not yet waited for. */
async function startYardsticks(databaseUrl: string, sampleReport: unknown) {
  const [barePort, straightforwardPort, floorPort] = [await freePort(), await freePort(), await freePort()];
  const bare = startChild('bare', ['--import', 'tsx', 'scripts/bench/baseline.ts'], {
    PORT: String(barePort),
    BASELINE_BODY: JSON.stringify(sampleReport),
  });
  const straightforward = startChild(
    'straightforward',
    ['--import', 'tsx', 'scripts/bench/straightforward/server.ts'],
    { DATABASE_URL: databaseUrl, PORT: String(straightforwardPort), LOG_LEVEL: 'warn' },
  );
  const floor = startChild('floor', ['--import', 'tsx', 'scripts/bench/floor.ts'], {
    DATABASE_URL: databaseUrl,
    PORT: String(floorPort),
  });
  const url = (port: number) => `http://127.0.0.1:${port}`;
  return {
    bare,
    straightforward,
    floor,
    urls: { bare: url(barePort), straightforward: url(straightforwardPort), floor: url(floorPort) },
  };
}

/** Builds the service, starts every target that runs all the time and waits until each answers. */
export async function startTargets(
  databaseUrl: string,
  smallHeaders: Headers,
  largeHeaders: Headers,
): Promise<Targets> {
  const productionArgs = buildProduction();
  const service = await startService(databaseUrl, productionArgs, smallHeaders);
  const reference = await readReference(service.url, largeHeaders);
  const yardsticks = await startYardsticks(databaseUrl, reference.sampleReport);
  const [workersPort, cappedPort] = [await freePort(), await freePort()];
  // The other service processes run only while driven: idle, each would still listen for (and take
  // PostgreSQL's work of delivering) every notification of the reports the one driven writes.
  const onDemand = {
    workers: () =>
      startChild('workers', productionArgs, serviceEnv(databaseUrl, workersPort, { WEB_CONCURRENCY: String(WORKERS) })),
    capped: () => startChild('capped', [...HEAP_CAP_ARGS, ...productionArgs], serviceEnv(databaseUrl, cappedPort)),
  };
  const urls: Record<Target, string> = {
    ...yardsticks.urls,
    service: service.url,
    workers: `http://127.0.0.1:${workersPort}`,
    capped: `http://127.0.0.1:${cappedPort}`,
    unnotified: service.url,
  };
  const { bare, straightforward, floor } = yardsticks;
  const pids: Record<Target, number> = {
    bare: bare.pid!,
    service: service.service.pid!,
    straightforward: straightforward.pid!,
    workers: 0,
    floor: floor.pid!,
    capped: 0,
    unnotified: service.service.pid!,
  };
  await waitUntilUp(`${urls.bare}/report`);
  await waitUntilUp(`${urls.straightforward}/auth`, smallHeaders);
  await waitUntilUp(`${urls.floor}/reports?limit=1`, smallHeaders);
  const running = [bare, straightforward, service.service, floor];
  return { urls, pids, onDemand, running, serviceIdleRssMb: service.idleRssMb, reference };
}
