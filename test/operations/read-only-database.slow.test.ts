import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { DeliveryWorker } from '../../src/integrations/events/delivery-worker.js';
import { RateLimiter } from '../../src/platform/limits/rate-limiter.js';
import { createClusterDatabase, type ClusterDatabase } from '../support/database.js';
import { api, databaseUrl, testLimits, TEST_RETRY_POLICY } from '../support/harness.js';
import { HttpsReceiver } from '../support/https-receiver.js';
import { captureLogs } from '../support/logs.js';
import { until } from '../support/wait.js';
import {
  appOn,
  expectConsoleOnReadOnly,
  expectReadsAnswered,
  expectWritesRefused,
  seed,
  tableDigest,
  type Holdings,
  type OwnApp,
} from '../support/read-only.js';

/**
 * A database that refuses writes (default_transaction_read_only, as a standby not yet promoted does):
 * every write answers 503 "database is read-only" with Retry-After and changes nothing, every read
 * answers as before. The setting is a database's own (ALTER DATABASE), in a database of this file's own
 * in the shared cluster: it reaches new sessions only, so the read-only app is a new one, as a process
 * that connects after the switch. Slow: a new app builds the validators of each operation it serves,
 * and the tests call nearly all of them.
 */
describe('a read-only database (default_transaction_read_only)', function () {
  this.timeout(60_000);
  let database: ClusterDatabase;
  let receiver: HttpsReceiver;
  let held: Holdings;
  let readOnly: OwnApp;

  before(async () => {
    receiver = await HttpsReceiver.start();
    database = await createClusterDatabase(databaseUrl(), 'read_only');
    const writable = appOn(database.url, { notifier: receiver.notifier() });
    try {
      held = await seed(writable.app, receiver);
    } finally {
      await writable.close();
    }
    await database.admin(`ALTER DATABASE ${database.name} SET default_transaction_read_only = on`);
    readOnly = appOn(database.url, { notifier: receiver.notifier() });
    const { rows } = await readOnly.db.query<{ on: string }>(
      "SELECT current_setting('default_transaction_read_only') AS on",
    );
    expect(rows[0]!.on).to.equal('on');
  });

  after(async () => {
    await readOnly?.close();
    await database?.drop();
    await receiver?.stop();
  });

  it('answers every write 503 "database is read-only" with Retry-After, writing nothing and sending no webhook', async () => {
    await expectWritesRefused(readOnly.app, held, readOnly.db, receiver);
  });

  it('answers every read 200, its key found though its use cannot be recorded', async () => {
    await expectReadsAnswered(readOnly.app, held);
  });

  it("answers the console's pages, and a 503 page with Retry-After to every form that writes", async () => {
    await expectConsoleOnReadOnly(readOnly.app, held, readOnly.db, receiver);
  });

  it("still holds a key's rate limit: each process counts its requests alone while the counts cannot be shared", async () => {
    // A clock that stays in one minute, so that the budget is not renewed during the test.
    const rateLimiter = new RateLimiter({ perMinute: 2, db: readOnly.db, syncMillis: 50, now: () => 90_000 });
    const limited = appOn(database.url, { limits: { ...testLimits(readOnly.db), rateLimiter } });
    try {
      for (const left of [1, 0]) {
        const res = await api(limited.app).get('/auth').set('X-API-KEY', held.key).expect(200);
        expect(res.headers.ratelimit).to.equal(`"per-key";r=${left};t=30`);
      }
      await sleep(200); // syncs that fail meanwhile
      await api(limited.app).get('/reports').set('X-API-KEY', held.key).expect(429).expect('Retry-After', '30');
    } finally {
      await rateLimiter.close();
      await limited.close();
    }
  });

  it('leaves due events to later: its worker takes none, sends nothing, and logs one line, not one per poll', async () => {
    const { rows } = await readOnly.db.query<{ status: string }>('SELECT status FROM webhook_events WHERE id = $1', [
      held.pendingEventId,
    ]);
    expect(rows[0]?.status).to.equal('pending');
    const before = await tableDigest(readOnly.db);
    const sent = receiver.received.length;
    const logs = captureLogs('info');
    const worker = new DeliveryWorker({
      db: readOnly.db,
      notifier: receiver.notifier(),
      policy: TEST_RETRY_POLICY,
      logger: logs.logger,
      pollMs: 50,
      maxInFlight: 8,
      maxInFlightPerCompany: 4,
    });
    worker.start();
    const failed = () => logs.entries().length > 0;
    await until(failed, 'failing to take the due events');
    // Twenty polls' time: one line for them all.
    await sleep(1_000);
    await worker.stop(1_000);
    expect(logs.entries().map((e) => e.msg)).to.deep.equal(['due webhook events not taken']);
    expect(receiver.received.length).to.equal(sent);
    expect(await tableDigest(readOnly.db)).to.deep.equal(before);
  });
});
