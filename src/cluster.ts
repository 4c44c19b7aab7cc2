import cluster, { type Worker } from 'node:cluster';
import { serveMetricsRequests } from './platform/observability/cluster-metrics.js';
import type { Logger } from './platform/observability/logger.js';

/** A replacement waits 100 ms after a worker died, doubled for each death within a minute, at most 30 s. */
const RESTART_BASE_MS = 100;
const RESTART_MAX_MS = 30_000;
const CRASH_WINDOW_MS = 60_000;
/** After SHUTDOWN_TIMEOUT_MS a worker has cut its requests off; one that still has not exited is killed. */
const KILL_AFTER_MS = 5_000;

export interface WorkersOptions {
  workers: number;
  /** Added to each worker's environment: the database and application token the primary settled on. */
  env: Record<string, string>;
  logger: Logger;
  shutdownTimeoutMs: number;
}

export interface Workers {
  /** The port, once the first worker listens; rejects when a worker dies before any listens. */
  listening: Promise<number>;
  /** Graceful stop of every worker (each drains its requests as a single process does); replaces none. */
  stop(): Promise<void>;
}

/**
 * The primary of WEB_CONCURRENCY > 1: forks the workers, which share one listening socket (node:cluster
 * hands connections out in turn), replaces a worker that dies, with a back-off so that a crash loop does
 * not spin, and collects the workers' metrics for /metrics (prom-client's AggregatorRegistry: counters
 * and histograms summed). The primary itself serves no request.
 */
export function startWorkers({ workers, env, logger, shutdownTimeoutMs }: WorkersOptions): Workers {
  let stopping = false;
  const deaths: number[] = [];
  const restarts = new Set<NodeJS.Timeout>();
  const fork = () => cluster.fork(env);

  serveMetricsRequests();

  let listened = false;
  let failStart: (err: Error) => void = () => undefined;
  const listening = new Promise<number>((resolve, reject) => {
    failStart = reject;
    cluster.once('listening', (_worker, { port }) => {
      listened = true;
      resolve(port);
    });
  });

  const stop = async () => {
    stopping = true;
    for (const timer of restarts) clearTimeout(timer);
    const running = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
    const exited = Promise.all(running.map((w) => new Promise((resolve) => w.once('exit', resolve))));
    for (const worker of running) worker.process.kill('SIGTERM');
    const killer = setTimeout(() => {
      for (const worker of running) if (!worker.isDead()) worker.process.kill('SIGKILL');
    }, shutdownTimeoutMs + KILL_AFTER_MS);
    await exited;
    clearTimeout(killer);
  };

  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    if (!listened) {
      // Dying before any worker listens is a start-up failure (a port in use, say), not a crash to retry.
      // The other workers go first: one left starting would fail against an exited primary, noisily.
      const failure = new Error(`a worker exited (${signal ?? `code ${code}`}) before listening`);
      void stop().then(() => failStart(failure));
      return;
    }
    const now = Date.now();
    while (deaths.length > 0 && deaths[0]! < now - CRASH_WINDOW_MS) deaths.shift();
    deaths.push(now);
    const restartInMs = Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** (deaths.length - 1));
    logger.error({ workerPid: worker.process.pid, code, signal, restartInMs }, 'worker exited; starting another');
    const timer = setTimeout(() => {
      restarts.delete(timer);
      fork();
    }, restartInMs);
    restarts.add(timer);
  });

  for (let i = 0; i < workers; i++) fork();
  logger.info({ workers }, 'started workers');

  return { listening, stop };
}
