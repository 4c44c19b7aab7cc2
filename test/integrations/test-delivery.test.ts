import { expect } from 'chai';
import type { Express } from 'express';
import { createApp } from '../../src/app.js';
import { createPool } from '../../src/db/pool.js';
import { OUTCOME_NOT_RECORDED } from '../../src/integrations/webhooks/deliveries.js';
import { SAMPLE_REPORT_ID } from '../../src/reports/sample.js';
import { api, appDeps, databaseUrl, newApp, newCompany } from '../support/harness.js';
import { HttpsReceiver } from '../support/https-receiver.js';
import { apiReport, auth, companyWithWebhook, deliveryLog, verifies, webhookSuite } from '../support/webhooks.js';

describe('test deliveries (POST /internal/companies/{companyId}/webhook/test)', () => {
  // Every request sent, test or not, must match openapi.yaml's webhooks section (webhookSuite checks).
  const suite = webhookSuite();

  const sendTest = (companyId: string, target: Express = suite.allowed.app) =>
    api(target).post(`/internal/companies/${companyId}/webhook/test`).set(auth);

  it('sends a signed sample report marked webhook-test: true, and logs it as a test', async () => {
    const company = await companyWithWebhook(suite.receiver);
    const res = await sendTest(company.companyId).send({}).expect(200);
    expect(res.body).to.deep.equal({ outcome: 'sent', deliveryId: res.body.deliveryId, status: 204 });

    const [request, ...more] = suite.receiver.at(company.path);
    expect(more).to.have.length(0);
    expect(request!.headers['webhook-test']).to.equal('true');
    expect(verifies(request!, company.secret)).to.equal(true);
    const sample = JSON.parse(request!.body) as Record<string, unknown>;
    expect(sample).to.include({ id: SAMPLE_REPORT_ID, status: 'published' });
    // The sample exists nowhere: not even the company's own key finds it.
    await api().get(`/reports/${SAMPLE_REPORT_ID}`).set('X-API-KEY', company.key).expect(404);

    const [entry] = await deliveryLog(company.companyId);
    expect(entry).to.deep.include({
      id: res.body.deliveryId,
      reportId: SAMPLE_REPORT_ID,
      test: true,
      webhookId: request!.headers['webhook-id'],
      url: suite.receiver.url(company.path),
      httpStatus: 204,
      error: '',
    });
  });

  it('gives every test a new webhook-id, and leaves real publishes unmarked: test false, no webhook-test header', async () => {
    const company = await companyWithWebhook(suite.receiver);
    await sendTest(company.companyId).expect(200);
    const reportId = await apiReport(company.key);
    await api(suite.allowed.app)
      .post(`/internal/companies/${company.companyId}/reports/${reportId}/publish`)
      .set(auth)
      .send({ publishedUrl: 'https://reports.example.com/r/1', notifyIntegration: true })
      .expect(200);
    await sendTest(company.companyId).expect(200);

    const [first, publish, second] = suite.receiver.at(company.path);
    expect(publish!.headers).not.to.have.property('webhook-test');
    expect(second!.headers['webhook-test']).to.equal('true');
    expect(second!.headers['webhook-id']).not.to.equal(first!.headers['webhook-id']);
    for (const request of [first!, publish!, second!]) expect(verifies(request, company.secret)).to.equal(true);
    const log = await deliveryLog(company.companyId);
    expect(log.map((e) => [e.test, e.reportId])).to.deep.equal([
      [true, SAMPLE_REPORT_ID],
      [false, reportId],
      [true, SAMPLE_REPORT_ID],
    ]);
  });

  it('answers 502 naming the status when the receiver refuses it, and logs the failed test', async () => {
    const company = await companyWithWebhook(suite.receiver);
    suite.receiver.on(company.path, { status: 401, body: 'bad signature' });
    const res = await sendTest(company.companyId).send({}).expect(502);
    expect(res.body).to.deep.equal({ error: 'webhook delivery failed: the receiver answered HTTP 401' });
    const [entry] = await deliveryLog(company.companyId);
    expect(entry).to.deep.include({
      test: true,
      httpStatus: 401,
      error: 'the receiver answered HTTP 401',
      responseExcerpt: 'bad signature',
    });
  });

  it('answers 502 for an address the guard refuses (production defaults), sending nothing', async () => {
    const company = await companyWithWebhook(suite.receiver);
    const res = await sendTest(company.companyId, newApp().app).expect(502);
    expect(res.body.error).to.match(/^webhook delivery failed: address 127\.0\.0\.1 is refused/);
    expect(suite.receiver.at(company.path)).to.have.length(0);
    expect((await deliveryLog(company.companyId))[0]).to.deep.include({ test: true, httpStatus: null });
  });

  it('answers 409 when the company has no webhook address: none set, a key only, or after a revocation', async () => {
    const error = { error: 'no webhook address is set for the company: set one first' };
    const withoutIntegration = await api().post('/internal/companies').set(auth).send({ name: 'No hook' }).expect(201);
    await sendTest(withoutIntegration.body.id).send({}).expect(409, error);
    const keyOnly = await newCompany();
    await sendTest(keyOnly.companyId).expect(409, error);
    const revoked = await companyWithWebhook(suite.receiver);
    await api().delete(`/internal/companies/${revoked.companyId}/integration`).set(auth).expect(204);
    await sendTest(revoked.companyId).expect(409, error);
    expect(suite.receiver.at(revoked.path)).to.have.length(0);
    for (const companyId of [withoutIntegration.body.id, keyOnly.companyId, revoked.companyId])
      expect(await deliveryLog(companyId)).to.deep.equal([]);
  });

  it('answers 400 for a body other than {}, sending nothing', async () => {
    const company = await companyWithWebhook(suite.receiver);
    await sendTest(company.companyId).send({ url: 'https://elsewhere.example.com' }).expect(400, {
      error: 'unknown field: url',
    });
    await sendTest(company.companyId).send([]).expect(400);
    await sendTest(company.companyId).set('Content-Type', 'application/json').send('"x"').expect(400);
    await sendTest(company.companyId).query({ verbose: 1 }).expect(400, { error: 'unknown query parameter: verbose' });
    expect(suite.receiver.at(company.path)).to.have.length(0);
    expect(await deliveryLog(company.companyId)).to.deep.equal([]);
  });

  it('holds no database connection while it waits, and takes one of the places publishing has too', async () => {
    // A receiver of its own that never answers, and an app whose pool has one connection and whose
    // notifier has one place: while the test delivery waits, that connection is free and the same app
    // answers other requests, but a second delivery, test or publish, is refused without being sent.
    const silent = await HttpsReceiver.start();
    const onePool = createPool({ connectionString: databaseUrl(), max: 1 });
    const app = createApp(
      appDeps(onePool, {
        notifier: silent.notifier({ timeoutMs: 30_000, maxInFlight: 1 }),
      }),
    );
    let pending: Promise<unknown> | undefined;
    try {
      const company = await newCompany();
      const path = '/never-answers';
      silent.on(path, 'hang');
      await api(app)
        .put(`/internal/companies/${company.companyId}/webhook`)
        .set(auth)
        .send({ url: silent.url(path) })
        .expect(200);
      let settled = false;
      const sent = sendTest(company.companyId, app).then((res) => {
        settled = true;
        return res;
      });
      pending = sent;
      for (let i = 0; i < 400 && silent.at(path).length === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(silent.at(path)).to.have.length(1);

      expect([onePool.totalCount - onePool.idleCount, onePool.waitingCount]).to.deep.equal([0, 0]);
      await api(app).get(`/internal/companies/${company.companyId}/integration`).set(auth).expect(200);
      const inFlight = await deliveryLog(company.companyId);
      expect(inFlight).to.have.length(1);
      expect(inFlight[0]).to.deep.include({ test: true, error: OUTCOME_NOT_RECORDED });

      const busy = { error: 'too many webhook deliveries in flight: test again in a moment' };
      await sendTest(company.companyId, app).expect(503, busy).expect('Retry-After', '1');
      const reportId = await apiReport(company.key);
      await api(app)
        .post(`/internal/companies/${company.companyId}/reports/${reportId}/publish`)
        .set(auth)
        .send({ publishedUrl: 'https://reports.example.com/r/1', notifyIntegration: true })
        .expect(503)
        .expect('Retry-After', '1');
      expect(silent.at(path)).to.have.length(1);
      expect(await deliveryLog(company.companyId)).to.have.length(1);
      expect(settled).to.equal(false);

      // The receiver goes away without answering: the test fails, and is logged.
      await silent.stop();
      expect((await sent).status).to.equal(502);
      expect((await deliveryLog(company.companyId))[0]).to.deep.include({ test: true, httpStatus: null });
      expect((await deliveryLog(company.companyId))[0]!.error).not.to.equal(OUTCOME_NOT_RECORDED);
      // The place is free again.
      await sendTest(company.companyId, app).expect(502);
    } finally {
      await silent.stop();
      await pending?.catch(() => undefined);
      await onePool.end();
    }
  });
});
