import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type { Test } from 'supertest';
import { createApp } from '../../src/app.js';
import { createPool } from '../../src/db/pool.js';
import { api, appDeps, databaseUrl, newApp, pool } from '../support/harness.js';
import { eventsSuite } from '../support/events.js';
import { waitUntilBlocked } from '../support/locks.js';
import { gate, until } from '../support/wait.js';
import { auth, companyWithWebhook, type CompanyWithWebhook } from '../support/webhooks.js';

/**
 * An event's life where attempts, redeliveries, address changes and revocations meet (issue 41's
 * interleavings), through HTTP against PostgreSQL and a real local HTTPS receiver that holds an attempt
 * until the test lets it answer. The worker's attempts may take 10 s, so a held one is still in flight.
 */
describe("an event's life when attempts meet other changes", () => {
  const { suite, startWorker, publish, apiReport, retrying, event, settled } = eventsSuite();
  const HOLD_MS = 10_000;
  const policy = (schedule: number[], disableAfterMs = 600_000) => ({ schedule, disableAfterMs });
  const worker = (schedule: number[], disableAfterMs?: number) =>
    startWorker(policy(schedule, disableAfterMs), 4, undefined, 50, HOLD_MS);
  const redeliver = (company: CompanyWithWebhook, eventId: string) =>
    api().post(`/events/${eventId}/redeliver`).set('X-API-KEY', company.key);
  const integration = async (companyId: string) =>
    (await api().get(`/internal/companies/${companyId}/integration`).set(auth).expect(200)).body as {
      webhookStatus: string;
    };

  /** The event's status as recorded (the key of a revoked integration no longer reads it). */
  const statusOf = async (company: CompanyWithWebhook, eventId: string) =>
    (
      await pool().query<{ status: string }>('SELECT status FROM webhook_events WHERE company_id = $1 AND id = $2', [
        company.companyId,
        eventId,
      ])
    ).rows[0]?.status;

  /** A published report whose event is pending: the publish's own attempt answered 500. */
  async function pendingEvent(company: CompanyWithWebhook): Promise<string> {
    const res = await publish(company, await apiReport(company.key), retrying).expect(200);
    expect(res.body.webhook.outcome).to.equal('retrying');
    return res.body.webhook.eventId as string;
  }

  it('has an event while its first attempt is sent: readable by its webhook-id, refused as a feed position until recorded', async () => {
    const company = await companyWithWebhook(suite.receiver);
    const held = gate();
    suite.receiver.on(company.path, { status: 204, waitFor: () => held.opened });
    const publishing = publish(company, await apiReport(company.key), retrying).then((res) => res);
    await until(() => suite.receiver.at(company.path).length === 1, "the publish's attempt in flight");
    const eventId = suite.receiver.at(company.path)[0]!.headers['webhook-id'] as string;
    // What a receiver verifying the webhook by looking it up gets.
    const looked = await api().get(`/events/${eventId}`).set('X-API-KEY', company.key).expect(200);
    expect(looked.body.delivery).to.include({ status: 'pending', nextAttemptAt: null });
    const early = await api().get(`/events?after=${eventId}`).set('X-API-KEY', company.key).expect(400);
    expect(early.body.error).to.match(/^after is not in the feed yet: /);
    held.open();
    expect((await publishing).body.webhook).to.include({ outcome: 'sent', eventId });
    // In the feed a moment after the publish's commit.
    const inFeed = async () => (await api().get(`/events?after=${eventId}`).set('X-API-KEY', company.key)).status;
    await until(async () => (await inFeed()) === 200, 'the event in the feed');
    const feed = await api().get('/events').set('X-API-KEY', company.key).expect(200);
    expect(feed.body.map((e: { id: string }) => e.id)).to.deep.equal([eventId]);
  });

  it('makes a redelivery asked for during an attempt after it: the attempt failing does not end the event', async () => {
    worker([100, 60_000]);
    const company = await companyWithWebhook(suite.receiver);
    const held = gate();
    suite.receiver.on(company.path, { status: 500 }, { status: 500, waitFor: () => held.opened }, { status: 204 });
    const eventId = await pendingEvent(company);
    await until(() => suite.receiver.at(company.path).length === 2, 'the background attempt in flight');
    await redeliver(company, eventId).expect(202);
    held.open();
    await settled(company.key, eventId, 'delivered');
    expect(suite.receiver.at(company.path)).to.have.length(3);
  });

  it("keeps what is left of a retrying event's schedule when its redelivery fails", async () => {
    worker([1_500, 200]);
    const company = await companyWithWebhook(suite.receiver);
    suite.receiver.on(company.path, { status: 500 }, { status: 500 }, { status: 204 });
    const eventId = await pendingEvent(company);
    const planned = (await event(company.key, eventId)).delivery.nextAttemptAt!;
    await redeliver(company, eventId).expect(202);
    await until(() => suite.receiver.at(company.path).length === 2, 'the redelivery made');
    await until(async () => (await event(company.key, eventId)).delivery.attempts === 2, 'the redelivery settled');
    const after = (await event(company.key, eventId)).delivery;
    // Still pending, due when the schedule had it before the redelivery.
    expect(after.status).to.equal('pending');
    expect(Math.abs(Date.parse(after.nextAttemptAt!) - Date.parse(planned))).to.be.below(50);
    await settled(company.key, eventId, 'delivered');
  });

  it('counts an outcome only for the address it was sent to: a 410 from the previous address disables nothing', async () => {
    worker([100, 60_000]);
    const company = await companyWithWebhook(suite.receiver);
    const held = gate();
    suite.receiver.on(company.path, { status: 500 }, { status: 410, waitFor: () => held.opened });
    const eventId = await pendingEvent(company);
    await until(() => suite.receiver.at(company.path).length === 2, 'the attempt to the first address in flight');
    const next = `${company.path}-next`;
    suite.receiver.on(next, { status: 204 });
    await api()
      .put(`/internal/companies/${company.companyId}/webhook`)
      .set(auth)
      .send({ url: suite.receiver.url(next) })
      .expect(200);
    held.open();
    await settled(company.key, eventId, 'delivered');
    expect(suite.receiver.at(next)).to.have.length(1);
    expect((await integration(company.companyId)).webhookStatus).to.equal('active');
  });

  it('ends a run of failures after a quiet spell: an address idle since its last failure is not disabled by the next', async () => {
    const quietApp = newApp({ notifier: suite.receiver.notifier(), retryPolicy: policy([100], 1_000) });
    try {
      worker([100], 1_000);
      const company = await companyWithWebhook(suite.receiver);
      suite.receiver.on(company.path, { status: 500 });
      const first = await api(quietApp.app)
        .post(`/internal/companies/${company.companyId}/reports/${await apiReport(company.key)}/publish`)
        .set(auth)
        .send(retrying)
        .expect(200);
      await settled(company.key, first.body.webhook.eventId, 'failed');
      // Longer than WEBHOOK_DISABLE_AFTER, with nothing to attempt.
      await sleep(1_500);
      const next = await api(quietApp.app)
        .post(`/internal/companies/${company.companyId}/reports/${await apiReport(company.key)}/publish`)
        .set(auth)
        .send(retrying)
        .expect(200);
      expect(next.body.webhook).to.include({ outcome: 'retrying', error: 'the receiver answered HTTP 500' });
      expect((await integration(company.companyId)).webhookStatus).to.equal('active');
    } finally {
      await quietApp.pool.end();
    }
  });

  it('settles an event only by the attempt holding its lease: a late settle after the lease ran out changes nothing', async () => {
    worker([200, 200, 60_000]);
    const company = await companyWithWebhook(suite.receiver);
    const held = gate();
    suite.receiver.on(
      company.path,
      { status: 500 },
      { status: 500, waitFor: () => held.opened },
      { status: 500 },
      { status: 204 },
    );
    const eventId = await pendingEvent(company);
    await until(() => suite.receiver.at(company.path).length === 2, 'the first background attempt in flight');
    // Renewed as the request started: it outlasts the request's time limit.
    const { rows } = await pool().query<{ left: number }>(
      `SELECT extract(epoch FROM leased_until - clock_timestamp()) * 1000 AS left
         FROM webhook_events WHERE company_id = $1 AND id = $2`,
      [company.companyId, eventId],
    );
    expect(Number(rows[0]!.left)).to.be.above(HOLD_MS - 1_000);
    // As if the lease had run out under the attempt: another attempt takes the event.
    await pool().query(
      `UPDATE webhook_events SET leased_until = clock_timestamp() - interval '1 second' WHERE company_id = $1 AND id = $2`,
      [company.companyId, eventId],
    );
    await until(async () => (await event(company.key, eventId)).delivery.attempts >= 3, 'the second attempt settled');
    held.open();
    // The late settle used no step of the schedule (its third wait is a minute): the next attempt comes at once.
    await settled(company.key, eventId, 'delivered', 5_000);
    expect(suite.receiver.at(company.path)).to.have.length(4);
  });

  it('never sends an event of a revoked integration to the next one, and refuses its redelivery with 409', async () => {
    const company = await companyWithWebhook(suite.receiver);
    const held = gate();
    suite.receiver.on(company.path, { status: 500, waitFor: () => held.opened });
    // The publish's own attempt is in flight when the integration is revoked and a new one set up.
    const publishing = publish(company, await apiReport(company.key), retrying).then((res) => res);
    await until(() => suite.receiver.at(company.path).length === 1, "the publish's attempt in flight");
    await api().delete(`/internal/companies/${company.companyId}/integration`).set(auth).expect(204);
    const next = `${company.path}-next`;
    suite.receiver.on(next, { status: 204 });
    await api()
      .put(`/internal/companies/${company.companyId}/webhook`)
      .set(auth)
      .send({ url: suite.receiver.url(next) })
      .expect(200);
    worker([100]);
    held.open();
    const res = await publishing;
    expect(res.body.webhook).to.include({ outcome: 'failed', error: 'the REST API integration was revoked' });
    const eventId = res.body.webhook.eventId as string;
    expect(await statusOf(company, eventId)).to.equal('cancelled');
    const refused = await api()
      .post(`/internal/companies/${company.companyId}/events/${eventId}/redeliver`)
      .set(auth)
      .expect(409);
    expect(refused.body.error).to.match(/revoked: it is never sent again$/);
    await sleep(500);
    expect(suite.receiver.at(next)).to.have.length(0);
  });

  it("delivers an event whose attempt got a 2xx while another event's 410 disabled the address", async () => {
    worker([100, 60_000]);
    const company = await companyWithWebhook(suite.receiver);
    const held = gate();
    // The publishes' own attempts fail; then the first background attempt is held (its answer 204), the second gets 410.
    suite.receiver.on(
      company.path,
      { status: 500 },
      { status: 500 },
      { status: 204, waitFor: () => held.opened },
      { status: 410 },
    );
    const events = [await pendingEvent(company), await pendingEvent(company)];
    await until(() => suite.receiver.at(company.path).length === 4, 'both background attempts made');
    await until(async () => (await integration(company.companyId)).webhookStatus === 'disabled', 'the 410 settled');
    held.open();
    const deliveredId = suite.receiver.at(company.path)[2]!.headers['webhook-id'] as string;
    await settled(company.key, deliveredId, 'delivered');
    const goneId = events.find((id) => id !== deliveredId)!;
    expect((await event(company.key, goneId)).delivery.status).to.equal('failed');
  });

  it('delivers an event whose attempt got a 2xx while the integration was revoked', async () => {
    worker([100, 60_000]);
    const company = await companyWithWebhook(suite.receiver);
    const held = gate();
    suite.receiver.on(company.path, { status: 500 }, { status: 204, waitFor: () => held.opened });
    const eventId = await pendingEvent(company);
    await until(() => suite.receiver.at(company.path).length === 2, 'the background attempt in flight');
    await api().delete(`/internal/companies/${company.companyId}/integration`).set(auth).expect(204);
    held.open();
    await until(async () => (await statusOf(company, eventId)) !== 'pending', 'the attempt settled');
    expect(await statusOf(company, eventId)).to.equal('delivered');
  });

  it('holds back every event of an address whose receiver asked to wait (Retry-After), not only the one it answered', async () => {
    worker([100, 60_000]);
    const company = await companyWithWebhook(suite.receiver);
    suite.receiver.on(company.path, { status: 503, headers: { 'Retry-After': '2' } }, { status: 500 }, { status: 204 });
    const started = Date.now();
    const paused = await pendingEvent(company);
    const other = await pendingEvent(company);
    await sleep(1_000);
    // The other event was due 100 ms after its failure, but the address is paused.
    expect(suite.receiver.at(company.path)).to.have.length(2);
    await settled(company.key, other, 'delivered');
    await settled(company.key, paused, 'delivered');
    const third = suite.receiver.at(company.path)[2]!;
    expect(Number(third.headers['webhook-timestamp']) * 1000).to.be.at.least(Math.floor(started / 1000) * 1000 + 1_000);
  });

  /**
   * Runs `act` (a request that changes many events at once) while another transaction holds a change to
   * the event's row, and commits that change once the request waits for it: the row then has a new
   * version, which the request must still change.
   */
  async function whileTheRowChanges(company: CompanyWithWebhook, eventId: string, act: () => Test): Promise<void> {
    const locker = await pool().connect();
    try {
      await locker.query('BEGIN');
      await locker.query('UPDATE webhook_events SET last_error = last_error WHERE company_id = $1 AND id = $2', [
        company.companyId,
        eventId,
      ]);
      let ended = false;
      const acting = act().then((res) => ((ended = true), res));
      expect(await waitUntilBlocked(pool(), locker, () => ended), 'the request waits for the row').to.equal(true);
      await locker.query('COMMIT');
      await acting;
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      locker.release();
    }
  }

  it('cancels an event whose row another transaction changed while the revocation waited for it', async () => {
    const company = await companyWithWebhook(suite.receiver);
    suite.receiver.on(company.path, { status: 500 });
    const eventId = await pendingEvent(company);
    await whileTheRowChanges(company, eventId, () =>
      api().delete(`/internal/companies/${company.companyId}/integration`).set(auth).expect(204),
    );
    expect(await statusOf(company, eventId)).to.equal('cancelled');
  });

  it('recovers a failed event whose row another transaction changed while the recovery waited for it', async () => {
    const company = await companyWithWebhook(suite.receiver);
    suite.receiver.on(company.path, { status: 500 });
    const since = new Date().toISOString();
    const eventId = await pendingEvent(company);
    await pool().query(
      "UPDATE webhook_events SET status = 'failed', next_attempt_at = NULL WHERE company_id = $1 AND id = $2",
      [company.companyId, eventId],
    );
    await whileTheRowChanges(company, eventId, () =>
      api()
        .post(`/internal/companies/${company.companyId}/events/redeliver`)
        .set(auth)
        .send({ since })
        .expect(202, { queued: 1 }),
    );
    expect(await statusOf(company, eventId)).to.equal('pending');
  });

  it('revokes a company with 20,000 pending events, every statement inside a short statement timeout', async function () {
    this.timeout(120_000);
    const company = await companyWithWebhook(suite.receiver);
    const reportId = await apiReport(company.key);
    await pool().query(
      `INSERT INTO webhook_events (company_id, id, report_id, integration_id, payload, status, next_attempt_at)
       SELECT $1, 'msg_many_' || n, $2, i.id, '{}', 'pending', clock_timestamp() + interval '1 hour'
         FROM generate_series(1, 20000) n, integrations i WHERE i.company_id = $1 AND i.revoked_at IS NULL`,
      [company.companyId, reportId],
    );
    const strict = createPool({ connectionString: databaseUrl(), max: 4, statementTimeoutMillis: 250 });
    try {
      const app = createApp(appDeps(strict));
      await api(app).delete(`/internal/companies/${company.companyId}/integration`).set(auth).expect(204);
      // Its key is revoked (an unknown key: 400, as verifyKey documents).
      await api(app).get('/auth').set('X-API-KEY', company.key).expect(400);
      const { rows } = await pool().query<{ status: string; n: number }>(
        'SELECT status, count(*)::int AS n FROM webhook_events WHERE company_id = $1 GROUP BY status',
        [company.companyId],
      );
      expect(rows).to.deep.equal([{ status: 'cancelled', n: 20_000 }]);
    } finally {
      await strict.end();
    }
  });
});
