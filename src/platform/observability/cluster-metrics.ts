import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';

// /metrics under node:cluster: a worker asks the primary over IPC, and the primary replies with every
// worker's metrics (prom-client's AggregatorRegistry: counters and histograms summed).

/** The IPC message a worker sends for the aggregated metrics, and the primary replies with. */
const METRICS_MESSAGE = 'intake:cluster-metrics';
/** Longer than prom-client's own 5 s limit for collecting the workers' metrics in the primary. */
const METRICS_TIMEOUT_MS = 6_000;

interface MetricsMessage {
  type: typeof METRICS_MESSAGE;
  id: number;
  text?: string;
  error?: string;
}

const isMetricsMessage = (message: unknown): message is MetricsMessage =>
  typeof message === 'object' && message !== null && (message as { type?: unknown }).type === METRICS_MESSAGE;

/** In the primary: replies to each worker's request for the aggregated metrics. */
export function serveMetricsRequests(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker: Worker, message: unknown) => {
    if (!isMetricsMessage(message)) return;
    const send = (reply: Partial<MetricsMessage>) => {
      if (worker.isConnected()) worker.send({ type: METRICS_MESSAGE, id: message.id, ...reply });
    };
    aggregator.clusterMetrics().then(
      (text) => send({ text }),
      (err: unknown) => send({ error: err instanceof Error ? err.message : String(err) }),
    );
  });
}

let lastId = 0;
/** Scrapes waiting for the primary, each ended by its reply or its timeout. */
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
