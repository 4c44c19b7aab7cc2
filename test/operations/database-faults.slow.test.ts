import { readdir } from 'node:fs/promises';
import { expect } from 'chai';
import type { Express } from 'express';
import pg from 'pg';
import { createApp } from '../../src/app.js';
import { toHttpError } from '../../src/platform/http/error-handler.js';
import { MIGRATIONS_DIR, runMigrations } from '../../src/db/migrate.js';
import { createPool, withTransaction, type Pool } from '../../src/db/pool.js';
import { createKey } from '../../src/integrations/keys/api-keys.js';
import { createCompany } from '../../src/companies/companies.js';
import { startOwnDatabase, type OwnDatabase } from '../support/database.js';
import { api, appDeps, reportInput, unique } from '../support/harness.js';
import { waitUntilBlocked } from '../support/locks.js';
import { captureLogs } from '../support/logs.js';

/**
 * Stops and restarts a PostgreSQL of its own (never the shared test database) under a running app.
 * The steps depend on each other, so they run in order within one describe.
 */
describe('database faults', function () {
  this.timeout(120_000);
  let database: OwnDatabase;
  let db: Pool;
  let app: Express;
  let key: string;
  const logs = captureLogs('info');

  before(async () => {
    database = await startOwnDatabase();
    db = createPool({ connectionString: database.url, connectionTimeoutMillis: 2000 });
    app = createApp(appDeps(db, { logger: logs.logger }));
  });

  after(async () => {
    await db?.end();
    await database?.remove();
  });

  it('is not ready until every migration is applied', async () => {
    const files = (await readdir(MIGRATIONS_DIR))
      .filter((f) => f.endsWith('.sql'))
      .sort((a, b) => parseInt(a, 10) - parseInt(b, 10));
    const before = await api(app).get('/readyz').expect(503);
    expect(before.body).to.deep.equal({ error: `database migrations not applied: ${files.join(', ')}` });
    await runMigrations(database.url);
    await api(app).get('/readyz').expect(200, { status: 'ready' });
    key = await withTransaction(
      db,
      async (client) => (await createKey(client, (await createCompany(client, unique('company'))).id)).key,
    );
  });

  it('answers 503 "database unavailable" while the database is down, and recovers by itself when it returns', async () => {
    const first = await api(app)
      .post('/reports/new')
      .set('X-API-KEY', key)
      .send(reportInput({ restId: unique('before') }))
      .expect(200);
    await database.stop();
    const logged = logs.entries().length;

    const unavailable = { error: 'database unavailable' };
    await api(app).post('/reports/new').set('X-API-KEY', key).send(reportInput()).expect(503, unavailable);
    await api(app).get('/reports').set('X-API-KEY', key).expect(503, unavailable);
    await api(app).get('/readyz').expect(503, unavailable);
    await api(app).get('/healthz').expect(200);

    await database.restart();
    await api(app).get('/readyz').expect(200);
    await api(app).get('/auth').set('X-API-KEY', key).expect(200);
    const list = await api(app).get('/reports').set('X-API-KEY', key).expect(200);
    expect(list.body.map((r: { id: string }) => r.id)).to.deep.equal([first.body.id]);
    await api(app).post('/reports/new').set('X-API-KEY', key).send(reportInput()).expect(200);

    const failures = logs
      .entries()
      .slice(logged)
      .filter((e) => e.msg === 'request completed' && e.status === 503);
    expect(failures).to.have.length(3);
    expect(failures.every((e) => e.level === 50)).to.equal(true);
  });

  it('leaves nothing half-written when the database goes away in the middle of a write', async () => {
    const restId = unique('half');
    const created = await api(app)
      .post('/reports/new')
      .set('X-API-KEY', key)
      .send(reportInput({ restId, notes: 'original', invoiceItems: ['Home inspection: $450'] }))
      .expect(200);
    const before = await api(app).get(`/reports/${created.body.id}`).set('X-API-KEY', key).expect(200);

    // Hold the report's row: the update's statement is under way, waiting for the row's lock.
    const blocker = new pg.Client({ connectionString: database.url });
    blocker.on('error', () => undefined);
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('SELECT 1 FROM reports WHERE id = $1 FOR UPDATE', [created.body.id]);
    const update = api(app)
      .post('/reports/new')
      .set('X-API-KEY', key)
      .send(reportInput({ restId, notes: 'changed', invoiceItems: ['Radon test: $150'] }))
      .then((res) => res);

    const watcher = new pg.Client({ connectionString: database.url });
    await watcher.connect();
    try {
      const blocked = await waitUntilBlocked(watcher, blocker);
      expect(blocked, 'the update is under way inside its transaction').to.equal(true);
      // The update's connection goes first, while the blocker still holds the row: stopping the server
      // alone races (the blocker's backend may end first and let the update commit before its own ends).
      const { rows } = await watcher.query(
        `SELECT pg_terminate_backend(pid) AS gone FROM pg_stat_activity
          WHERE pid = ANY(SELECT pid FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid)))`,
        [(await blocker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid],
      );
      expect(rows.map((r: { gone: boolean }) => r.gone)).to.deep.equal([true]);
    } finally {
      await watcher.end();
    }
    await database.stop();
    expect(
      (await update).status,
      JSON.stringify(
        logs
          .entries()
          .filter((e) => e.msg === 'request failed')
          .slice(-1),
      ),
    ).to.equal(503);
    expect((await update).body).to.deep.equal({ error: 'database unavailable' });

    await database.restart();
    const after = await api(app).get(`/reports/${created.body.id}`).set('X-API-KEY', key).expect(200);
    expect(after.body).to.deep.equal(before.body);
    expect(after.body).to.include({ inspectorNotes: 'original' });
    expect(after.body.invoiceItems).to.deep.equal(['Home inspection: $450.00']);
  });

  it('takes every way the driver reports a lost or too slow database for 503 with Retry-After, and nothing else', () => {
    const lost = [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      Object.assign(new Error('the database system is shutting down'), { code: '57P03' }),
      Object.assign(new Error('sorry, too many clients already'), { code: '53300' }),
      new Error('Connection terminated unexpectedly'),
      new Error('Connection terminated due to connection timeout'),
      new Error('timeout exceeded when trying to connect'),
      // A query sent on a connection that dropped a moment before (a COMMIT after the server went away).
      new Error('Client has encountered a connection error and is not queryable'),
      // Too slow: cut off by the server's statement_timeout, or by the client's query_timeout.
      Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
      new Error('Query read timeout'),
    ];
    for (const err of lost) {
      const httpError = toHttpError(err);
      expect(httpError, err.message).to.include({ status: 503, message: 'database unavailable' });
      expect(httpError.headers, err.message)
        .to.have.property('Retry-After')
        .that.matches(/^[1-9]\d*$/);
    }
    const notLost = Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
    expect(toHttpError(notLost).status).to.equal(500);
  });
});
