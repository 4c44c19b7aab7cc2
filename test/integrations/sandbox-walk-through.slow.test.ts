import type { Server } from 'node:http';
import { expect } from 'chai';
import { api, newCompany, reportInput } from '../support/harness.js';
import { startReceiver, startStage, stop, type Receiver } from '../support/receiver-process.js';

describe('docs/walk-throughs.md: the sandbox, from a test key to a verified webhook', function () {
  this.timeout(120_000);
  let service: Server | undefined;
  let receiver: Receiver | undefined;

  afterEach(async () => {
    if (receiver) await stop(receiver);
    service?.close();
  });

  it('issues a test key, publishes a sandbox report to its own receiver, verified, and wipes the sandbox', async () => {
    const stage = await startStage();
    ({ receiver, service } = stage);
    const { admin } = stage;
    const port = receiver.port;
    const base = stage.baseUrl;

    const { companyId } = await newCompany();
    const { key } = await admin('create-key', companyId, '--test');
    expect(key).to.match(/^irk_test_/);
    const { secret } = await admin('set-webhook', companyId, `https://127.0.0.1:${port}/webhook`, '--test');
    await stop(receiver);
    receiver = await startReceiver([secret], port);

    const created = await api(base)
      .post('/reports/new')
      .set('X-API-KEY', key)
      .send(reportInput({ restId: 'crm-1' }))
      .expect(200);
    expect(created.headers['intake-mode']).to.equal('test');
    const published = await api(base)
      .post(`/sandbox/reports/${created.body.id}/publish`)
      .set('X-API-KEY', key)
      .send({ notifyIntegration: true })
      .expect(200);
    expect(published.body.webhook).to.include({ outcome: 'sent', status: 204 });
    const id = created.body.id as string;
    expect(await receiver.next(/^[✔✘]/)).to.match(
      new RegExp(`^✔ verified msg_\\S+: report ${id} published at https://sandbox\\.invalid/reports/${id}$`),
    );

    await api(base).delete('/sandbox/reports').set('X-API-KEY', key).expect(204);
    await api(base).get(`/reports/${id}`).set('X-API-KEY', key).expect(404);
  });
});
