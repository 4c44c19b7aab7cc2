import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { Pool } from '../../src/db/pool.js';
import { api, pool, TEST_RETRY_POLICY, unique } from '../support/harness.js';
import { until } from '../support/wait.js';
import { Behaviour } from '../support/https-receiver.js';
import { eventsSuite } from '../support/events.js';
import { auth, companyWithWebhook, type CompanyWithWebhook } from '../support/webhooks.js';

/**
 * Durable deliveries through HTTP against PostgreSQL and a real local HTTPS receiver: events recorded
 * with publishes, attempts made again in the background on a short schedule, the feed, redelivery.
 * The background worker runs in this process, on the suite's notifier (which trusts the receiver).
 */

describe('durable deliveries: background attempts', () => {
  const { suite, startWorker, publish, apiReport, retrying, event, settled } = eventsSuite();

  /** A company whose receiver never answers, with `count` pending events due now, each carrying one of its reports. */
  /** A company with `count` due events whose receiver never answers (or answers as given). */
  async function deadReceiverWithBacklog(count: number, answers: Behaviour = 'hang'): Promise<CompanyWithWebhook> {
    const dead = await companyWithWebhook(suite.receiver);
    suite.receiver.on(dead.path, answers);
    const reportId = await apiReport(dead.key);
    const { body: report } = await api().get(`/reports/${reportId}`).set('X-API-KEY', dead.key).expect(200);
    await pool().query(
      `INSERT INTO webhook_events (company_id, id, report_id, integration_id, payload, status, next_attempt_at)
       SELECT $1, 'msg_dead_' || n || '_' || $3, $2, i.id, $4, 'pending', clock_timestamp()
         FROM generate_series(1, $5::int) n, integrations i WHERE i.company_id = $1 AND i.revoked_at IS NULL`,
      [dead.companyId, reportId, unique('x'), JSON.stringify(report), count],
    );
    return dead;
  }

  const log = async (companyId: string) =>
    (await api().get(`/internal/companies/${companyId}/webhook-deliveries?limit=100`).set(auth).expect(200))
      .body as Array<{ eventId: string; attempt: number; httpStatus: number | null; webhookId: string }>;

  describe('automatic attempts', () => {
    it('gets a receiver failing twice then answering 200 three attempts with one webhook-id, each verified', async () => {
      startWorker();
      const company = await companyWithWebhook(suite.receiver);
      suite.receiver.on(company.path, { status: 500 }, { status: 502 }, { status: 200 });
      const id = await apiReport(company.key);
      const res = await publish(company, id, retrying).expect(200);
      expect(res.body.report).to.include({ id, status: 'published' });
      expect(res.body.webhook).to.include({ outcome: 'retrying', error: 'the receiver answered HTTP 500' });
      const eventId = res.body.webhook.eventId as string;
      expect(Date.parse(res.body.webhook.nextAttemptAt)).to.be.greaterThan(Date.now() - 1_000);

      const done = await settled(company.key, eventId, 'delivered');
      expect(done.delivery).to.include({ attempts: 3, nextAttemptAt: null, lastError: '' });
      const requests = suite.receiver.at(company.path);
      expect(requests).to.have.length(3);
      for (const request of requests) {
        expect(request.headers['webhook-id']).to.equal(eventId);
        new Webhook(company.secret).verify(request.body, request.headers as Record<string, string>);
        expect(JSON.parse(request.body)).to.deep.equal(done.report);
      }
      const attempts = (await log(company.companyId)).reverse();
      expect(attempts.map((a) => [a.eventId, a.attempt, a.httpStatus])).to.deep.equal([
        [eventId, 1, 500],
        [eventId, 2, 502],
        [eventId, 3, 200],
      ]);
    });

    it('fails an event once the schedule is used up, and says so', async () => {
      startWorker();
      const company = await companyWithWebhook(suite.receiver);
      suite.receiver.on(company.path, { status: 500 });
      const res = await publish(company, await apiReport(company.key), retrying).expect(200);
      const failed = await settled(company.key, res.body.webhook.eventId, 'failed');
      expect(failed.delivery.attempts).to.equal(TEST_RETRY_POLICY.schedule.length + 1);
      expect(failed.delivery.lastError).to.equal('the receiver answered HTTP 500 (the last of 4 attempts)');
      expect(suite.receiver.at(company.path)).to.have.length(4);
    });

    it('honours a 503 with Retry-After: the next attempt waits that long, not the schedule', async () => {
      startWorker();
      const company = await companyWithWebhook(suite.receiver);
      suite.receiver.on(company.path, { status: 503, headers: { 'Retry-After': '2' } }, { status: 204 });
      const res = await publish(company, await apiReport(company.key), retrying).expect(200);
      const pending = await event(company.key, res.body.webhook.eventId);
      const wait = Date.parse(pending.delivery.nextAttemptAt!) - Date.parse(pending.delivery.lastAttemptAt!);
      expect(wait).to.be.within(1_900, 3_000);
      await sleep(1_000);
      expect(suite.receiver.at(company.path)).to.have.length(1);
      await settled(company.key, res.body.webhook.eventId, 'delivered');
      const [first, second] = suite.receiver.at(company.path).map((r) => Number(r.headers['webhook-timestamp']));
      expect(second! - first!).to.be.at.least(1);
    });

    it('disables an address that answered 410: no attempt goes to it, pending events fail, setting it again enables it', async () => {
      startWorker();
      const company = await companyWithWebhook(suite.receiver);
      suite.receiver.on(company.path, { status: 503, headers: { 'Retry-After': '60' } });
      const waiting = await publish(company, await apiReport(company.key), retrying).expect(200);
      suite.receiver.on(company.path, { status: 410 });
      const gone = await publish(company, await apiReport(company.key), retrying).expect(200);
      expect(gone.body.webhook).to.deep.equal({
        outcome: 'failed',
        eventId: gone.body.webhook.eventId,
        error: 'the webhook address is disabled: the receiver answered HTTP 410 Gone',
      });
      const integration = await api().get(`/internal/companies/${company.companyId}/integration`).set(auth).expect(200);
      expect(integration.body).to.include({
        webhookStatus: 'disabled',
        webhookDisabledReason: 'the receiver answered HTTP 410 Gone',
      });
      // The event that was waiting failed with the address, and is never attempted.
      const failed = await event(company.key, waiting.body.webhook.eventId);
      expect(failed.delivery).to.include({ status: 'failed', nextAttemptAt: null });
      expect(failed.delivery.lastError).to.match(/disabled: the receiver answered HTTP 410 Gone$/);
      const sent = suite.receiver.at(company.path).length;
      // While disabled: "fail" is 502 saying so and publishes nothing; "retry" publishes, the event failed.
      const id = await apiReport(company.key);
      const refused = await publish(company, id, { ...retrying, whenDeliveryFails: 'fail' }).expect(502);
      expect(refused.body.error).to.match(/^webhook delivery failed: the webhook address is disabled/);
      const { body: unpublished } = await api().get(`/reports/${id}`).set('X-API-KEY', company.key).expect(200);
      expect(unpublished.status).to.equal('new');
      const later = await publish(company, id, retrying).expect(200);
      expect(later.body.webhook.outcome).to.equal('failed');
      await sleep(300);
      expect(suite.receiver.at(company.path)).to.have.length(sent);
      // Setting the address again enables it; failed events stay failed until redelivered.
      suite.receiver.on(company.path, { status: 204 });
      await api()
        .put(`/internal/companies/${company.companyId}/webhook`)
        .set(auth)
        .send({ url: suite.receiver.url(company.path) })
        .expect(200);
      const enabled = await api().get(`/internal/companies/${company.companyId}/integration`).set(auth).expect(200);
      expect(enabled.body).to.include({ webhookStatus: 'active', webhookDisabledReason: '' });
      expect((await event(company.key, waiting.body.webhook.eventId)).delivery.status).to.equal('failed');
    });

    it('disables an address whose attempts all failed for WEBHOOK_DISABLE_AFTER', async () => {
      startWorker({ schedule: [100, 100, 100, 100, 100, 100, 100, 100, 100, 100], disableAfterMs: 500 });
      const company = await companyWithWebhook(suite.receiver);
      suite.receiver.on(company.path, { status: 500 });
      const res = await publish(company, await apiReport(company.key), retrying).expect(200);
      const failed = await settled(company.key, res.body.webhook.eventId, 'failed');
      expect(failed.delivery.lastError).to.match(/^the webhook address is disabled: every attempt has failed since /);
      const integration = await api().get(`/internal/companies/${company.companyId}/integration`).set(auth).expect(200);
      expect(integration.body.webhookStatus).to.equal('disabled');
      // Disabled before the schedule ran out (its ten waits would have made eleven attempts).
      expect(failed.delivery.attempts).to.be.within(2, 10);
    });

    it('cancels every pending event when the integration is revoked: none is sent again', async () => {
      startWorker();
      const company = await companyWithWebhook(suite.receiver);
      suite.receiver.on(company.path, { status: 503, headers: { 'Retry-After': '2' } });
      const res = await publish(company, await apiReport(company.key), retrying).expect(200);
      const eventId = res.body.webhook.eventId as string;
      await api().delete(`/internal/companies/${company.companyId}/integration`).set(auth).expect(204);
      const { rows } = await pool().query<{ status: string; last_error: string }>(
        'SELECT status, last_error FROM webhook_events WHERE company_id = $1 AND id = $2',
        [company.companyId, eventId],
      );
      expect(rows).to.deep.equal([{ status: 'cancelled', last_error: 'the REST API integration was revoked' }]);
      await sleep(2_500);
      expect(suite.receiver.at(company.path)).to.have.length(1);
    });

    it('paces a company whose receiver fails: about one attempt a poll, its other events still due, no step lost', async () => {
      startWorker(TEST_RETRY_POLICY, 4, undefined, 250);
      const failing = await deadReceiverWithBacklog(200, { status: 500 });
      await until(() => suite.receiver.at(failing.path).length >= 1, 'the failing receiver reached');
      await sleep(1_000);
      // Unpaced, four places would have failed through the 200 events within the second.
      expect(suite.receiver.at(failing.path).length).to.be.within(2, 8);
      const { rows } = await pool().query<{ attempted: number; due: number }>(
        `SELECT count(*) FILTER (WHERE failures > 0)::int AS attempted,
                count(*) FILTER (WHERE failures = 0 AND status = 'pending')::int AS due
           FROM webhook_events WHERE company_id = $1`,
        [failing.companyId],
      );
      expect(rows[0]!.attempted + rows[0]!.due).to.equal(200);
      // The first success ends the pacing: the rest go at the company's full share.
      suite.receiver.on(failing.path, { status: 204 });
      await until(() => suite.receiver.at(failing.path).length >= 200, 'every event attempted', 20_000);
      // A revocation while attempts are in flight and settling is answered, never a deadlock's 500.
      const revoked = await api().delete(`/internal/companies/${failing.companyId}/integration`).set(auth);
      expect([revoked.status, revoked.text]).to.deep.equal([204, '']);
    });

    it("delivers another company's event promptly while one company has 2,000 pending against a dead receiver", async function () {
      this.timeout(60_000);
      startWorker(TEST_RETRY_POLICY, 2);
      const dead = await deadReceiverWithBacklog(2_000);
      await until(() => suite.receiver.at(dead.path).length >= 2, 'the dead receiver reached');
      const alive = await companyWithWebhook(suite.receiver);
      suite.receiver.on(alive.path, { status: 500 }, { status: 204 });
      const res = await publish(alive, await apiReport(alive.key), retrying).expect(200);
      const started = Date.now();
      await settled(alive.key, res.body.webhook.eventId, 'delivered', 5_000);
      expect(Date.now() - started).to.be.below(5_000);
      // The dead receiver's company never held more than its share of the worker's places.
      expect(suite.receiver.at(dead.path).length).to.be.at.most(2 * Math.ceil((Date.now() - started) / 1_000 + 2));
      await api().delete(`/internal/companies/${dead.companyId}/integration`).set(auth).expect(204);
    });

    it("attempts a healthy company's retry and redelivery within seconds of due while 40 companies' receivers hang", async function () {
      this.timeout(90_000);
      // Each hanging attempt holds its place for the whole limit, as a receiver that never answers does.
      const timeoutMs = 5_000;
      const dead = await Promise.all(Array.from({ length: 40 }, () => deadReceiverWithBacklog(10)));
      try {
        startWorker(TEST_RETRY_POLICY, 4, undefined, 50, timeoutMs);
        // The worker's 32 places hang; when their limit runs out, the 8 companies not yet attempted take
        // the places freed: two limits later, every one of the 40 has failed and the worker knows it.
        const hanging = () => dead.reduce((sum, d) => sum + suite.receiver.at(d.path).length, 0);
        await until(() => hanging() >= 32, "the worker's places taken");
        await sleep(2 * timeoutMs + 500);

        const alive = await companyWithWebhook(suite.receiver);
        const attempts = (eventId: string) =>
          suite.receiver.at(alive.path).filter((r) => r.headers['webhook-id'] === eventId).length;
        const sent = await publish(alive, await apiReport(alive.key), retrying).expect(200);
        expect(sent.body.webhook.outcome).to.equal('sent');
        const redelivered = sent.body.webhook.eventId as string;
        suite.receiver.on(alive.path, { status: 500 }, { status: 204 });
        const failed = await publish(alive, await apiReport(alive.key), retrying).expect(200);
        expect(failed.body.webhook.outcome).to.equal('retrying');
        const retried = failed.body.webhook.eventId as string;
        await api().post(`/events/${redelivered}/redeliver`).set('X-API-KEY', alive.key).expect(202);
        // The redelivery is due now, the retry 200 ms after its failure: both are attempted within seconds.
        await until(
          () => attempts(redelivered) >= 2 && attempts(retried) >= 2,
          'the redelivery and retry attempted',
          5_000,
        );
        await settled(alive.key, redelivered, 'delivered');
        await settled(alive.key, retried, 'delivered');
      } finally {
        for (const d of dead)
          await api().delete(`/internal/companies/${d.companyId}/integration`).set(auth).expect(204);
      }
    });

    it('takes due events reading a few rows, however many one company has waiting', async function () {
      this.timeout(60_000);
      const backlog = 5_000;
      const takes: number[] = [];
      const dead = await deadReceiverWithBacklog(backlog);
      // The statistics autovacuum keeps once a table holds such a backlog: a plan made before it has
      // seen the rows is not the one that meets them.
      await pool().query('ANALYZE webhook_events');
      startWorker(TEST_RETRY_POLICY, 4, explainingTakes(suite.allowed.pool, takes));
      await until(() => suite.receiver.at(dead.path).length >= 4, 'the backlog taken');
      expect(takes.length).to.be.above(0);
      // Each take read a tenth of the backlog at most: the companies with events waiting, and their first ones.
      expect(Math.max(...takes)).to.be.below(backlog / 10);
      await api().delete(`/internal/companies/${dead.companyId}/integration`).set(auth).expect(204);
    });
  });
});

/**
 * The pool, except that before the worker's take (the statement that leases due events) runs, the
 * same statement is run under EXPLAIN ANALYZE and rolled back, and the rows it read of webhook_events
 * (those it kept and those it filtered out, in every loop) are pushed to `rowsRead`.
 */
function explainingTakes(db: Pool, rowsRead: number[]): Pool {
  const query = async (text: unknown, values?: unknown[]) => {
    if (typeof text === 'string' && text.includes('SET leased_until = clock_timestamp() +')) {
      const client = await db.connect();
      try {
        await client.query('BEGIN');
        const { rows } = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
        rowsRead.push(rowsOf((rows[0] as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan));
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
    }
    return db.query(text as string, values);
  };
  return new Proxy(db, {
    get: (target, prop) => {
      if (prop === 'query') return query;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** The rows a plan read of webhook_events. */
function rowsOf(node: PlanNode): number {
  const own =
    node['Relation Name'] === 'webhook_events'
      ? (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0)) * node['Actual Loops']
      : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + rowsOf(child), 0);
}
