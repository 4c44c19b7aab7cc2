import { expect } from 'chai';
import type { Response } from 'supertest';
import { api, newApp } from '../support/harness.js';
import { apiReport, auth, companyWithWebhook, deliveryLog, webhookSuite } from '../support/webhooks.js';
import { gate, until } from '../support/wait.js';

describe('webhook places per company (WEBHOOK_MAX_IN_FLIGHT_PER_COMPANY)', () => {
  const suite = webhookSuite();

  it("refuses a company's delivery past its share while another company's publish and test delivery still go out", async () => {
    // Six places in the process, four of them at most for one company: without shares, company A's
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
      for (const res of await Promise.all(held)) expect(res.status).to.equal(200);
      // A's places are given back: its publish goes out now.
      await publishOf(a.companyId, reportOfA).expect(200);
      expect(await deliveryLog(a.companyId)).to.have.length(5);
    } finally {
      receiverAnswers.open();
      await Promise.allSettled(held);
      await server.pool.end();
    }
  });
});
