import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from '../../src/db/pool.js';
import { DeliveryWorker } from '../../src/integrations/events/delivery-worker.js';
import type { RetryPolicy } from '../../src/integrations/events/event-life.js';
import { createLogger } from '../../src/platform/observability/logger.js';
import { api, reportInput, TEST_RETRY_POLICY } from './harness.js';
import { auth, webhookSuite } from './webhooks.js';

/** An event as GET /events/{eventId} answers it. */
export interface Event {
  id: string;
  type: string;
  createdAt: string;
  report: { id: string; status: string; publishedUrl: string };
  delivery: {
    status: string;
    attempts: number;
    lastAttemptAt: string | null;
    nextAttemptAt: string | null;
    lastError: string;
  };
}

/**
 * The events tests' suite (call it inside a describe): a webhook suite with its local HTTPS receiver,
 * background workers started on it and stopped after each test, and the requests the tests share.
 */
export function eventsSuite() {
  const suite = webhookSuite();
  let workers: DeliveryWorker[] = [];

  /** A worker making this suite's background attempts, with the given policy; `timeoutMs` limits each attempt. */
  function startWorker(
    policy: RetryPolicy = TEST_RETRY_POLICY,
    maxInFlightPerCompany = 4,
    db?: Pool,
    pollMs = 50,
    timeoutMs = 1_000,
  ): DeliveryWorker {
    const worker = new DeliveryWorker({
      db: db ?? suite.allowed.pool,
      notifier: suite.receiver.notifier({ timeoutMs, maxInFlight: 32 }),
      policy,
      logger: createLogger('silent'),
      pollMs,
      maxInFlight: 32,
      maxInFlightPerCompany,
    });
    worker.start();
    workers.push(worker);
    return worker;
  }
  afterEach(async () => {
    await Promise.all(workers.map((w) => w.stop(2_000)));
    workers = [];
  });

  const publish = (company: { companyId: string }, reportId: string, body: Record<string, unknown>) =>
    api(suite.allowed.app)
      .post(`/internal/companies/${company.companyId}/reports/${reportId}/publish`)
      .set(auth)
      .send(body);

  async function apiReport(key: string): Promise<string> {
    const res = await api().post('/reports/new').set('X-API-KEY', key).send(reportInput()).expect(200);
    return res.body.id as string;
  }

  const retrying = {
    publishedUrl: 'https://reports.example.com/r/1',
    notifyIntegration: true,
    whenDeliveryFails: 'retry',
  };

  const event = async (key: string, id: string): Promise<Event> =>
    (await api().get(`/events/${id}`).set('X-API-KEY', key).expect(200)).body as Event;

  async function settled(key: string, id: string, status: string, timeoutMs = 10_000): Promise<Event> {
    let last: Event | undefined;
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      last = await event(key, id);
      if (last.delivery.status === status) return last;
      await sleep(50);
    }
    throw new Error(`event ${id} is ${JSON.stringify(last?.delivery)}, not ${status}, after ${timeoutMs} ms`);
  }

  return { suite, startWorker, publish, apiReport, retrying, event, settled };
}
