import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Logger } from './logger.js';

/** The IPC message a worker sends for the aggregated metrics, and the primary answers with. */
const METRICS_MESSAGE = 'intake:cluster-metrics';
/** Longer than prom-client's own 5 s limit for collecting the workers' metrics in the primary. */
const METRICS_TIMEOUT_MS = 6_000;
/** A replacement waits 100 ms after a worker died, doubled for each death within a minute, at most 30 s. */
const RESTART_BASE_MS = 100;
const RESTART_MAX_MS = 30_000;
const CRASH_WINDOW_MS = 60_000;
/** After SHUTDOWN_TIMEOUT_MS a worker has cut its requests off; one that still has not exited is killed. */
const KILL_AFTER_MS = 5_000;

interface MetricsMessage {
  type: typeof METRICS_MESSAGE;
  id: number;
  text?: string;
  error?: string;
}

const isMetricsMessage = (message: unknown): message is MetricsMessage =>
  typeof message === 'object' && message !== null && (message as { type?: unknown }).type === METRICS_MESSAGE;

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
  const aggregator = new AggregatorRegistry();
  let stopping = false;
  const deaths: number[] = [];
  const restarts = new Set<NodeJS.Timeout>();
  const fork = () => cluster.fork(env);

  cluster.on('message', (worker: Worker, message: unknown) => {
    if (!isMetricsMessage(message)) return;
    const answer = (reply: Partial<MetricsMessage>) => {
      if (worker.isConnected()) worker.send({ type: METRICS_MESSAGE, id: message.id, ...reply });
    };
    aggregator.clusterMetrics().then(
      (text) => answer({ text }),
      (err: unknown) => answer({ error: err instanceof Error ? err.message : String(err) }),
    );
  });

  let listened = false;
  let failStart: (err: Error) => void = () => undefined;
  const listening = new Promise<number>((resolve, reject) => {
    failStart = reject;
    cluster.once('listening', (_worker, { port }) => {
      listened = true;
      resolve(port);
    });
  });

  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    if (!listened) {
      // Dying before any worker listens is a start-up failure (a port in use, say), not a crash to retry.
      stopping = true;
      failStart(new Error(`a worker exited (${signal ?? `code ${code}`}) before listening`));
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

  return {
    listening,
    async stop() {
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
    },
  };
}

let lastId = 0;
/** Scrapes waiting for the primary, each ended by its answer or its timeout. */
const pending = new Map<number, (reply: MetricsMessage | undefined) => void>();

/** In a worker: the metrics of every worker, aggregated by the primary. */
export function clusterMetrics(): Promise<string> {
  if (lastId === 0) {
    process.on('message', (message: unknown) => {
      if (isMetricsMessage(message)) pending.get(message.id)?.(message);
    });
  }
  const id = ++lastId;
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => settle(undefined), METRICS_TIMEOUT_MS);
    const settle = (reply: MetricsMessage | undefined) => {
      clearTimeout(timer);
      pending.delete(id);
      if (reply === undefined) reject(new Error('the primary process did not answer'));
      else if (reply.error !== undefined) reject(new Error(reply.error));
      else resolve(reply.text ?? '');
    };
    pending.set(id, settle);
    process.send!({ type: METRICS_MESSAGE, id });
  });
}
