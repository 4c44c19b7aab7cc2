import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import type { Express } from 'express';
import pg from 'pg';
import { createApp } from '../../src/app.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { MIGRATIONS_DIR, runMigrations } from '../../src/db/migrate.js';
import { createPool, withTransaction, type Pool } from '../../src/db/pool.js';
import { createKey } from '../../src/store/api-keys.js';
import { createCompany } from '../../src/store/companies.js';
import { newClusterDir } from '../support/database.js';
import { api, appDeps, reportInput, unique } from '../support/harness.js';
import { waitUntilBlocked } from '../support/locks.js';
import { captureLogs } from '../support/logs.js';

/**
 * Stops and restarts a PostgreSQL of its own (never the shared test database) under a running app.
 * The steps depend on each other, so they run in order within one describe.
 */
describe('database faults', function () {
  this.timeout(120_000);
  let dir: string;
  let database: EmbeddedDatabase;
  let port: number;
  let db: Pool;
  let app: Express;
  let key: string;
  const logs = captureLogs('info');

  const startDatabase = async () => {
    database = await startEmbeddedPostgres(path.join(dir, 'pg'), undefined, port);
  };

  before(async () => {
    dir = await newClusterDir();
    database = await startEmbeddedPostgres(path.join(dir, 'pg'));
    port = Number(new URL(database.url).port);
    db = createPool({ connectionString: database.url, connectionTimeoutMillis: 2000 });
    app = createApp(appDeps(db, { logger: logs.logger }));
  });

  after(async () => {
    await db?.end();
    await database?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is not ready until every migration is applied', async () => {
    const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort((a, b) => parseInt(a, 10) - parseInt(b, 10));
    const before = await api(app).get('/readyz').expect(503);
    expect(before.body).to.deep.equal({ error: `database migrations not applied: ${files.join(', ')}` });
    await runMigrations(database.url);
    await api(app).get('/readyz').expect(200, { status: 'ready' });
    key = await withTransaction(db, async (client) => (await createKey(client, (await createCompany(client, unique('company'))).id)).key);
  });

  it('answers 503 "database unavailable" while the database is down, and recovers by itself when it returns', async () => {
    const first = await api(app).post('/reports/new').set('X-API-KEY', key).send(reportInput({ restId: unique('before') })).expect(200);
    await database.stop();
    const logged = logs.entries().length;

    const unavailable = { error: 'database unavailable' };
    await api(app).post('/reports/new').set('X-API-KEY', key).send(reportInput()).expect(503, unavailable);
    await api(app).get('/reports').set('X-API-KEY', key).expect(503, unavailable);
    await api(app).get('/readyz').expect(503, unavailable);
    await api(app).get('/healthz').expect(200);

    await startDatabase();
    await api(app).get('/readyz').expect(200);
    await api(app).get('/auth').set('X-API-KEY', key).expect(200);
    const list = await api(app).get('/reports').set('X-API-KEY', key).expect(200);
    expect(list.body.map((r: { id: string }) => r.id)).to.deep.equal([first.body.id]);
    await api(app).post('/reports/new').set('X-API-KEY', key).send(reportInput()).expect(200);

    const failures = logs.entries().slice(logged).filter((e) => e.msg === 'request completed' && e.status === 503);
    expect(failures).to.have.length(3);
    expect(failures.every((e) => e.level === 50)).to.equal(true);
  });

  it('leaves nothing half-written when the database goes away in the middle of a write', async () => {
    // Hold the invoice items table, so the write stops after inserting the report row, inside its transaction.
    const blocker = new pg.Client({ connectionString: database.url });
    blocker.on('error', () => undefined);
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE report_invoice_items IN ACCESS EXCLUSIVE MODE');
    const restId = unique('half');
    const write = api(app).post('/reports/new').set('X-API-KEY', key)
      .send(reportInput({ restId, invoiceItems: ['Home inspection: $450'] })).then((res) => res);

    const watcher = new pg.Client({ connectionString: database.url });
    await watcher.connect();
    const blocked = await waitUntilBlocked(watcher, 'DELETE FROM report_invoice_items').finally(() => watcher.end());
    expect(blocked, 'the write reached the invoice items inside its transaction').to.equal(true);
    await database.stop();
    expect((await write).status).to.equal(503);
    expect((await write).body).to.deep.equal({ error: 'database unavailable' });

    await startDatabase();
    const found = await api(app).get(`/reports?restId=${restId}`).set('X-API-KEY', key).expect(200);
    expect(found.body).to.deep.equal([]);
  });
});
