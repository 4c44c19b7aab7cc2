import type { Server } from 'node:http';
import { expect } from 'chai';
import { DeliveryWorker } from '../../src/integrations/events/delivery-worker.js';
import { createLogger } from '../../src/platform/observability/logger.js';
import { api, newCompany, pool, reportInput, TEST_RETRY_POLICY } from '../support/harness.js';
import { startReceiver, startStage, stop, type Receiver } from '../support/receiver-process.js';

describe('docs/walk-throughs.md: the sandbox, from a test key to a verified webhook', function () {
  this.timeout(120_000);
  let service: Server | undefined;
  let receiver: Receiver | undefined;
  let worker: DeliveryWorker | undefined;

  afterEach(async () => {
    await worker?.stop(2_000);
    if (receiver) await stop(receiver);
    service?.close();
  });

  it('issues a test key, starts and publishes a sandbox report to its own receiver, verified, and wipes the sandbox', async () => {
    const stage = await startStage();
    ({ receiver, service } = stage);
    const { admin } = stage;
    const port = receiver.port;
    const base = stage.baseUrl;
    // What a service process runs beside its routes: the background attempts, which send a start's webhook.
    worker = new DeliveryWorker({
      db: pool(),
      notifier: stage.notifier,
      policy: TEST_RETRY_POLICY,
      logger: createLogger('silent'),
      pollMs: 50,
      maxInFlight: 4,
      maxInFlightPerCompany: 4,
    });
    worker.start();

    const { companyId } = await newCompany();
    const { key } = await admin('create-key', companyId, '--test');
    expect(key).to.match(/^irk_test_/);
    const events = ['--events', 'report.published,report.started'];
    const set = await admin('set-webhook', companyId, `https://127.0.0.1:${port}/webhook`, '--test', ...events);
    expect(set.eventTypes).to.deep.equal(['report.published', 'report.started']);
    await stop(receiver);
    receiver = await startReceiver([set.secret], port);

    const created = await api(base)
      .post('/reports/new')
      .set('X-API-KEY', key)
      .send(reportInput({ restId: 'crm-1' }))
      .expect(200);
    expect(created.headers['intake-mode']).to.equal('test');
    const id = created.body.id as string;
    const started = await api(base).post(`/sandbox/reports/${id}/start`).set('X-API-KEY', key).expect(200);
    expect(started.body.status).to.equal('in_progress');
    expect(await receiver.next(/^[✔✘]/)).to.match(new RegExp(`^✔ verified msg_\\S+: report ${id} started$`));

    const published = await api(base)
      .post(`/sandbox/reports/${id}/publish`)
      .set('X-API-KEY', key)
      .send({ notifyIntegration: true })
      .expect(200);
    expect(published.body.webhook).to.include({ outcome: 'sent', status: 204 });
    expect(await receiver.next(/^[✔✘]/)).to.match(
      new RegExp(`^✔ verified msg_\\S+: report ${id} published at https://sandbox\\.invalid/reports/${id}$`),
    );

    await api(base).delete('/sandbox/reports').set('X-API-KEY', key).expect(204);
    await api(base).get(`/reports/${id}`).set('X-API-KEY', key).expect(404);
  });
});
