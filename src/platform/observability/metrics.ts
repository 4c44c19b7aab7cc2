import cluster from 'node:cluster';
import type { RequestHandler } from 'express';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { clusterMetrics } from './cluster-metrics.js';
import type { Pool } from '../../db/pool.js';
import { routeTemplate } from '../http/route-template.js';

/** Process-wide metrics (one process, one registry): default process metrics, HTTP, webhooks. */
const processRegistry = new Registry();
collectDefaultMetrics({ register: processRegistry });

const httpRequests = new Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by method, route template and status.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [processRegistry],
});

const httpDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from receiving a request to the end of its response, by method, route template and status.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [processRegistry],
});

export type WebhookOutcome = 'sent' | 'failed';

/**
 * Webhook deliveries attempted, by outcome: `sent` (2xx) or `failed` (network error, timeout,
 * non-2xx, refused address). The notifier calls `webhookDeliveriesTotal.inc({ outcome })` per attempt.
 */
export const webhookDeliveriesTotal = new Counter<'outcome'>({
  name: 'webhook_deliveries_total',
  help: 'Webhook deliveries attempted, by outcome (sent, failed).',
  labelNames: ['outcome'] as const,
  registers: [processRegistry],
});
// Both series exist from the start, so rate() and alerts work before the first failure.
for (const outcome of ['sent', 'failed'] satisfies WebhookOutcome[]) webhookDeliveriesTotal.inc({ outcome }, 0);

interface RequestSeries {
  count: { inc(): void };
  duration: { observe(seconds: number): void };
}

/**
 * The labelled series of each (method, route, status), looked up once: prom-client hashes the label
 * values on every inc() and observe() given them. Bounded: methods Node parses, route templates of
 * the document (or "unmatched"), statuses the service sends.
 */
const requestSeries = new Map<string, RequestSeries>();

function seriesOf(method: string, route: string, status: string): RequestSeries {
  const key = `${method} ${route} ${status}`;
  let series = requestSeries.get(key);
  if (!series) {
    series = {
      count: httpRequests.labels(method, route, status),
      duration: httpDuration.labels(method, route, status),
    };
    requestSeries.set(key, series);
  }
  return series;
}

/** Counts and times every request by route template (never the raw path) when its response ends. */
export const httpMetrics: RequestHandler = (req, res, next) => {
  const started = process.hrtime.bigint();
  res.once('close', () => {
    // A response that never finished was cut off (client gone, shutdown timeout).
    const series = seriesOf(req.method, routeTemplate(req), res.writableFinished ? String(res.statusCode) : 'aborted');
    series.count.inc();
    series.duration.observe(Number(process.hrtime.bigint() - started) / 1e9);
  });
  next();
};

/** This process's registry: the process-wide metrics plus gauges of this app's database pool. */
function metricsRegistry(pool: Pool): Registry {
  const poolRegistry = new Registry();
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [poolRegistry],
      collect() {
        this.set(read());
      },
    });
  gauge(
    'db_pool_connections_in_use',
    'Database connections checked out of the pool.',
    () => pool.totalCount - pool.idleCount,
  );
  gauge('db_pool_connections_idle', 'Open database connections waiting in the pool.', () => pool.idleCount);
  gauge(
    'db_pool_waiting_requests',
    'Requests queued for a database connection because the pool is at its maximum.',
    () => pool.waitingCount,
  );
  return Registry.merge([processRegistry, poolRegistry]);
}

/**
 * What /metrics serves: this process's metrics, or in a cluster worker those of every worker, which
 * the primary collects (each worker hands it its registry here) and aggregates.
 */
export function metricsSource(pool: Pool): { contentType: string; text: () => Promise<string> } {
  const registry = metricsRegistry(pool);
  if (!cluster.isWorker) return { contentType: registry.contentType, text: () => registry.metrics() };
  // Constructing one installs prom-client's handler of the primary's requests in this worker.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries(registry);
  return { contentType: registry.contentType, text: clusterMetrics };
}
