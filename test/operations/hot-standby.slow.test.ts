import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { runMigrations } from '../../src/db/migrate.js';
import type { Queryable } from '../../src/db/pool.js';
import { api } from '../support/harness.js';
import { HttpsReceiver } from '../support/https-receiver.js';
import {
  appOn,
  expectConsoleOnReadOnly,
  expectReadsAnswered,
  expectWritesRefused,
  seed,
  type Holdings,
  type OwnApp,
} from '../support/read-only.js';
import { startStandby, startStockPostgres, type StockPostgres } from '../support/stock-postgres.js';
import { auth } from '../support/webhooks.js';

/** Waits until the standby has replayed everything the primary has written so far. */
async function replayed(primary: Queryable, standby: Queryable): Promise<void> {
  const { rows } = await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
  for (const deadline = Date.now() + 10_000; ; await sleep(20)) {
    const { rows: done } = await standby.query<{ done: boolean }>(
      'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done',
      [rows[0]!.lsn],
    );
    if (done[0]!.done) return;
    if (Date.now() > deadline) throw new Error(`the standby did not replay up to ${rows[0]!.lsn} in time`);
  }
}

/**
 * The service pointed at a hot standby (Debian's PostgreSQL: a primary, and a standby made by
 * pg_basebackup -R, not promoted): every write answers 503 "database is read-only" with Retry-After and
 * changes nothing, every read answers from the standby, and the caches ask the database, as the standby
 * refuses LISTEN. The steps share the two servers, so they run in order within one describe.
 */
describe('a hot standby (not promoted)', function () {
  this.timeout(180_000);
  let primary: StockPostgres;
  let standby: StockPostgres;
  let receiver: HttpsReceiver;
  let writable: OwnApp;
  let onStandby: OwnApp;
  let held: Holdings;
  /** When the app on the standby was made, and how much of the standby's log came before. */
  let since: { at: number; logged: number };

  before(async () => {
    receiver = await HttpsReceiver.start();
    primary = await startStockPostgres();
    await runMigrations(primary.url);
    writable = appOn(primary.url, { notifier: receiver.notifier() });
    held = await seed(writable.app, receiver);
    standby = await startStandby(primary);
    since = { at: Date.now(), logged: standby.log().length };
    onStandby = appOn(standby.url, { notifier: receiver.notifier() });
  });

  after(async () => {
    await onStandby?.close();
    await writable?.close();
    await standby?.remove();
    await primary?.remove();
    await receiver?.stop();
  });

  it('runs on a standby in recovery, which holds what the primary had', async () => {
    const { rows } = await onStandby.db.query<{ recovery: boolean; reports: number }>(
      'SELECT pg_is_in_recovery() AS recovery, (SELECT count(*)::int FROM reports WHERE company_id = $1) AS reports',
      [held.companyId],
    );
    expect(rows[0]).to.deep.equal({ recovery: true, reports: 5 });
  });

  it('answers every write 503 "database is read-only" with Retry-After, writing nothing and sending no webhook', async () => {
    await expectWritesRefused(onStandby.app, held, onStandby.db, receiver);
  });

  it('answers every read 200', async () => {
    await expectReadsAnswered(onStandby.app, held);
  });

  it("answers the console's pages, and a 503 page with Retry-After to every form that writes", async () => {
    await expectConsoleOnReadOnly(onStandby.app, held, onStandby.db, receiver);
  });

  it('asks the database while the standby refuses LISTEN: a key revoked on the primary is refused once replayed', async () => {
    expect(onStandby.apiKeys.listening).to.equal(false);
    const internal = `/internal/companies/${held.companyId}/api-keys`;
    const { body: created } = await api(writable.app).post(internal).set(auth).send({}).expect(201);
    await replayed(writable.db, onStandby.db);
    await api(onStandby.app).get('/auth').set('X-API-KEY', created.key).expect(200);
    await api(writable.app).delete(`${internal}/${created.id}`).set(auth).expect(204);
    await replayed(writable.db, onStandby.db);
    await api(onStandby.app).get('/auth').set('X-API-KEY', created.key).expect(400, { error: 'invalid API key' });
  });

  it('asks the standby for LISTEN again only every few seconds, not every second', async () => {
    // A span long enough to tell one attempt every five seconds from one every second.
    await sleep(Math.max(0, since.at + 6_000 - Date.now()));
    const elapsed = Date.now() - since.at;
    const refused =
      standby
        .log()
        .slice(since.logged)
        .match(/cannot execute LISTEN during recovery/g) ?? [];
    expect(refused.length).to.be.within(1, Math.floor(elapsed / 5_000) + 1);
  });
});
