import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type { Express } from 'express';
import { createApp } from '../../src/app.js';
import { runMigrations } from '../../src/db/migrate.js';
import { createPool, type Pool } from '../../src/db/pool.js';
import { OUTCOME_NOT_RECORDED } from '../../src/integrations/webhooks/deliveries.js';
import { startOwnDatabase, type OwnDatabase } from '../support/database.js';
import { APP_TOKEN, api, appDeps, reportInput, unique } from '../support/harness.js';
import { HttpsReceiver } from '../support/https-receiver.js';
import { gate, until } from '../support/wait.js';

const auth = { Authorization: `Bearer ${APP_TOKEN}` };

/** Stops and restarts a PostgreSQL of its own (never the shared test database) under a publish in flight. */
describe('publishing when the database goes away during the delivery', function () {
  this.timeout(120_000);
  let database: OwnDatabase;
  let db: Pool;
  let app: Express;
  let receiver: HttpsReceiver;

  before(async () => {
    database = await startOwnDatabase();
    await runMigrations(database.url);
    receiver = await HttpsReceiver.start();
    db = createPool({ connectionString: database.url, connectionTimeoutMillis: 2000 });
    // The claim lasts 3 s (delivery) + 2 s (connect timeout) + 5 s.
    app = createApp(appDeps(db, { notifier: receiver.notifier({ timeoutMs: 3000 }) }));
  });

  after(async () => {
    await receiver?.stop();
    await db?.end();
    await database?.remove();
  });

  it('answers 503 with Retry-After, keeps the attempt in the log, and the retry reuses the webhook-id', async () => {
    const { body: company } = await api(app)
      .post('/internal/companies')
      .set(auth)
      .send({ name: unique('co') })
      .expect(201);
    const { body: key } = await api(app).post(`/internal/companies/${company.id}/api-keys`).set(auth).expect(201);
    const hook = `/${unique('hook')}`;
    await api(app)
      .put(`/internal/companies/${company.id}/webhook`)
      .set(auth)
      .send({ url: receiver.url(hook) })
      .expect(200);
    const { body: report } = await api(app)
      .post('/reports/new')
      .set('X-API-KEY', key.key)
      .send(reportInput())
      .expect(200);
    const publish = () =>
      api(app)
        .post(`/internal/companies/${company.id}/reports/${report.id}/publish`)
        .set(auth)
        .send({ publishedUrl: 'https://r.example.com/1', notifyIntegration: true });

    const receiverAnswers = gate();
    receiver.on(hook, { status: 204, waitFor: () => receiverAnswers.opened });
    const first = publish().then((res) => res);
    await until(() => receiver.at(hook).length === 1, 'delivered');
    await database.stop();
    receiverAnswers.open();

    const lost = await first;
    expect(lost.status).to.equal(503);
    expect(lost.body.error).to.match(
      /^database unavailable after the webhook delivery \(the receiver answered HTTP 204\), so its outcome is not recorded: publish again in \d+ s; the retry carries the same webhook-id$/,
    );
    const retryAfter = Number(lost.headers['retry-after']);
    expect(retryAfter).to.be.within(1, 10);
    const claimExpired = Date.now() + retryAfter * 1000;

    await database.restart();
    // Until the claim runs out, the report is still being published.
    await publish().expect(409);
    await sleep(claimExpired - Date.now());
    const retried = await publish().expect(200);
    expect(retried.body.webhook).to.include({ outcome: 'sent', status: 204 });

    const [lostId, retryId, ...more] = receiver.at(hook).map((r) => r.headers['webhook-id']);
    expect(more).to.have.length(0);
    expect(retryId).to.equal(lostId);
    const { body: log } = await api(app)
      .get(`/internal/companies/${company.id}/webhook-deliveries`)
      .set(auth)
      .expect(200);
    expect(log).to.have.length(2);
    expect(log[0]).to.deep.include({
      id: retried.body.webhook.deliveryId,
      webhookId: lostId,
      httpStatus: 204,
      error: '',
    });
    expect(log[1]).to.deep.include({ webhookId: lostId, httpStatus: null, error: OUTCOME_NOT_RECORDED });
  });
});
