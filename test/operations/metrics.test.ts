import type pg from 'pg';
import { expect } from 'chai';
import { createApp } from '../../src/app.js';
import { createPool } from '../../src/db/pool.js';
import { APP_TOKEN, api, app, appDeps, databaseUrl, newCompany, pool, testLimits } from '../support/harness.js';
import { HttpsReceiver } from '../support/https-receiver.js';
import { sample } from '../support/metrics.js';

const bearer = { Authorization: `Bearer ${APP_TOKEN}` };

async function scrape(target = app()): Promise<string> {
  const res = await api(target)
    .get('/metrics')
    .set(bearer)
    .expect(200)
    .expect('Content-Type', /^text\/plain; version=0\.0\.4/);
  return res.text;
}

describe('GET /metrics', () => {
  it('requires the application token', async () => {
    await api().get('/metrics').expect(401).expect('WWW-Authenticate', 'Bearer');
    await api().get('/metrics').set('Authorization', 'Bearer not-the-token-0123456789abcdef0123').expect(401);
    const { key } = await newCompany();
    await api().get('/metrics').set('X-API-KEY', key).expect(401);
  });

  it('counts and times requests by method, route template and status', async () => {
    const { key } = await newCompany();
    const id = 'a3e1c9f0-1111-4222-8333-444455556666';
    const labels = { method: 'GET', route: '/reports/{reportId}', status: '404' };
    const before = await scrape();
    await api().get(`/reports/${id}`).set('X-API-KEY', key).expect(404);
    await api().get(`/reports/${id}`).set('X-API-KEY', key).expect(404);
    const after = await scrape();

    expect(sample(after, 'http_requests_total', labels) - sample(before, 'http_requests_total', labels)).to.equal(2);
    expect(
      sample(after, 'http_request_duration_seconds_count', labels) -
        sample(before, 'http_request_duration_seconds_count', labels),
    ).to.equal(2);
    expect(sample(after, 'http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).to.be.at.least(2);
    expect(after).to.match(/^# TYPE http_request_duration_seconds histogram$/m);
    expect(after).not.to.include(id);
  });

  it('counts webhook deliveries by outcome, both outcomes present from the start', async () => {
    const before = await scrape();
    expect(before).to.match(/^webhook_deliveries_total\{outcome="sent"\} \d+$/m);
    expect(before).to.match(/^webhook_deliveries_total\{outcome="failed"\} \d+$/m);

    const receiver = await HttpsReceiver.start();
    try {
      receiver.on('/ok', { status: 204 });
      receiver.on('/broken', { status: 500 });
      const notifier = receiver.notifier();
      const message = {
        secrets: [`whsec_${Buffer.alloc(24, 1).toString('base64')}`],
        webhookId: 'msg_metrics',
        type: 'report.published' as const,
        payload: '{}',
      };
      for (const path of ['/ok', '/broken', '/broken']) await notifier.deliver({ ...message, url: receiver.url(path) });
    } finally {
      await receiver.stop();
    }

    const after = await scrape();
    const delta = (outcome: string) =>
      sample(after, 'webhook_deliveries_total', { outcome }) - sample(before, 'webhook_deliveries_total', { outcome });
    expect([delta('sent'), delta('failed')]).to.deep.equal([1, 2]);
  });

  it("reports the database pool's connections in use, idle, and requests waiting", async () => {
    // The queued query waits for the one connection as long as the test may take, not the default 5 s.
    const db = createPool({ connectionString: databaseUrl(), max: 1, connectionTimeoutMillis: 25_000 });
    let held: pg.PoolClient | undefined;
    try {
      // The rate limiter's background sync on the shared pool: only this test's queries use db's one connection.
      const target = createApp(appDeps(db, { limits: testLimits(pool()) }));
      // A first scrape builds the app's validators (seconds on a loaded machine) before the connection is held.
      await scrape(target);
      const client = await db.connect();
      held = client;
      const queued = db.query('SELECT 1');
      let text = await scrape(target);
      expect([
        sample(text, 'db_pool_connections_in_use'),
        sample(text, 'db_pool_connections_idle'),
        sample(text, 'db_pool_waiting_requests'),
      ]).to.deep.equal([1, 0, 1]);
      client.release();
      held = undefined;
      await queued;
      text = await scrape(target);
      expect([
        sample(text, 'db_pool_connections_in_use'),
        sample(text, 'db_pool_connections_idle'),
        sample(text, 'db_pool_waiting_requests'),
      ]).to.deep.equal([0, 1, 0]);
    } finally {
      held?.release();
      await db.end();
    }
  });

  it('includes the default process metrics', async () => {
    const text = await scrape();
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect(text).to.match(new RegExp(`^${name} `, 'm'));
    }
  });
});
