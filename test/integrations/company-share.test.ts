import { expect } from 'chai';
import type { Response } from 'supertest';
import { api, newApp, newTestKey, pool, reportInput, testLimits } from '../support/harness.js';
import { apiReport, auth, companyWithWebhook, deliveryLog, webhookSuite } from '../support/webhooks.js';
import { gate, until } from '../support/wait.js';

describe('webhook delivery slots per company (WEBHOOK_MAX_IN_FLIGHT_PER_COMPANY)', () => {
  const suite = webhookSuite();

  it("refuses a company's delivery past its share while another company's publish and test delivery still go out", async () => {
    // Six slots in the process, four of them at most for one company: without shares, company A's
    // slow receiver could take all six and leave B none.
    const server = newApp({ notifier: suite.receiver.notifier({ maxInFlight: 6, maxInFlightPerCompany: 4 }) });
    const receiverAnswers = gate();
    const held: Promise<Response>[] = [];
    try {
      const [a, b] = [await companyWithWebhook(suite.receiver), await companyWithWebhook(suite.receiver)];
      suite.receiver.on(a.path, { status: 204, waitFor: () => receiverAnswers.opened });
      const testOf = (companyId: string) =>
        api(server.app).post(`/internal/companies/${companyId}/webhook/test`).set(auth);
      const publishOf = (companyId: string, reportId: string) =>
        api(server.app)
          .post(`/internal/companies/${companyId}/reports/${reportId}/publish`)
          .set(auth)
          .send({ publishedUrl: 'https://reports.example.com/r/1', notifyIntegration: true });
      const [reportOfA, reportOfB] = [await apiReport(a.key), await apiReport(b.key)];

      for (let i = 0; i < 4; i++) held.push(testOf(a.companyId).then((res) => res));
      await until(() => suite.receiver.at(a.path).length === 4, "A's four deliveries held by its receiver");

      const share = 'too many webhook deliveries of this company in flight (its share of this process is 4)';
      await testOf(a.companyId)
        .expect(503, { error: `${share}: test again in a moment` })
        .expect('Retry-After', '1');
      await publishOf(a.companyId, reportOfA)
        .expect(503, { error: `${share}: publish again in a moment` })
        .expect('Retry-After', '1');
      expect(suite.receiver.at(a.path), 'nothing more sent to A').to.have.length(4);

      const bTest = await testOf(b.companyId).expect(200);
      expect(bTest.body).to.include({ outcome: 'sent', status: 204 });
      const bPublish = await publishOf(b.companyId, reportOfB).expect(200);
      expect(bPublish.body.webhook).to.include({ outcome: 'sent', status: 204 });
      expect(suite.receiver.at(b.path)).to.have.length(2);

      receiverAnswers.open();
      for (const res of await Promise.all(held)) expect([res.status, res.text]).to.deep.equal([200, res.text]);
      // A's slots are given back: its publish goes out now.
      await publishOf(a.companyId, reportOfA).expect(200);
      expect(await deliveryLog(a.companyId)).to.have.length(5);
    } finally {
      receiverAnswers.open();
      await Promise.allSettled(held);
      await server.pool.end();
    }
  });

  it("leaves the company's live creates and publishes served while its sandbox's publishes wait for a slow receiver", async () => {
    // A share of 4 requests and 4 deliveries per company, as a deployment's defaults.
    const server = newApp({
      notifier: suite.receiver.notifier({ maxInFlightPerCompany: 4 }),
      limits: testLimits(pool(), { perCompany: 4 }),
    });
    const receiverAnswers = gate();
    const held: Promise<Response>[] = [];
    try {
      const [a, b] = [await companyWithWebhook(suite.receiver), await companyWithWebhook(suite.receiver)];
      const sandbox = await newTestKey(a.companyId);
      const sandboxPath = `${a.path}-sandbox`;
      await api()
        .put(`/internal/companies/${a.companyId}/sandbox/webhook`)
        .set(auth)
        .send({ url: suite.receiver.url(sandboxPath) })
        .expect(200);
      suite.receiver.on(sandboxPath, { status: 204, waitFor: () => receiverAnswers.opened });
      const create = (key: string) =>
        api(server.app)
          .post('/reports/new')
          .set('X-API-KEY', key)
          .send(reportInput())
          .then((res) => res);

      for (let i = 0; i < 4; i++) {
        const { body } = await create(sandbox.key);
        const publish = api(server.app)
          .post(`/sandbox/reports/${body.id}/publish`)
          .set('X-API-KEY', sandbox.key)
          .send({ notifyIntegration: true });
        held.push(publish.then((res) => res));
      }
      await until(() => suite.receiver.at(sandboxPath).length === 4, "the sandbox's four deliveries held");

      // Ten live creates of the company at once, as ten of another company's; and its live publish.
      const statuses = (key: string) =>
        Promise.all(Array.from({ length: 10 }, () => create(key).then((r) => r.status)));
      const [live, other] = await Promise.all([statuses(a.key), statuses(b.key)]);
      expect(live, "the company's live creates").to.deep.equal(Array(10).fill(200));
      expect(other, "another company's creates").to.deep.equal(Array(10).fill(200));
      const published = await api(server.app)
        .post(`/internal/companies/${a.companyId}/reports/${await apiReport(a.key)}/publish`)
        .set(auth)
        .send({ publishedUrl: 'https://reports.example.com/r/1', notifyIntegration: true })
        .expect(200);
      expect(published.body.webhook).to.include({ outcome: 'sent', status: 204 });

      receiverAnswers.open();
      for (const res of await Promise.all(held)) expect([res.status, res.text]).to.deep.equal([200, res.text]);
    } finally {
      receiverAnswers.open();
      await Promise.allSettled(held);
      await server.pool.end();
    }
  });
});
