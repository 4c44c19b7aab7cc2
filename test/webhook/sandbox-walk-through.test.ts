import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { createApp } from '../../src/app.js';
import { createNotifier } from '../../src/integrations/notifier.js';
import { listen } from '../../src/platform/http/listen.js';
import { api, APP_TOKEN, appDeps, newCompany, pool, reportInput } from '../support/harness.js';
import { ROOT, startReceiver, stop, type Receiver } from '../support/receiver-process.js';

const run = promisify(execFile);

describe('the README walk-through: the sandbox, from a test key to a verified webhook', function () {
  this.timeout(120_000);
  let service: Server | undefined;
  let receiver: Receiver | undefined;

  afterEach(async () => {
    if (receiver) await stop(receiver);
    service?.close();
  });

  it('issues a test key, publishes a sandbox report to its own receiver, verified, and wipes the sandbox', async () => {
    receiver = await startReceiver(['whsec_bm90LXlldC1zZXQ=']);
    const port = receiver.port;
    const ca = await readFile(path.join(ROOT, '.data/webhook-receiver/cert.pem'), 'utf8');
    const notifier = createNotifier({
      allowedCidrs: ['127.0.0.1/32'],
      timeoutMs: 10_000,
      ca: [ca],
      maxInFlight: 32,
      maxInFlightPerCompany: 4,
    });
    service = await listen(createApp(appDeps(pool(), { notifier })), 0, '127.0.0.1');
    const base = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
    const env = { ...process.env, API_URL: base, APP_TOKEN };
    const admin = async (...args: string[]) =>
      JSON.parse(
        (await run(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], { cwd: ROOT, env })).stdout,
      );

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
