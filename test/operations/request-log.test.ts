import http from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { createApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createPool, type Pool } from '../../src/db/pool.js';
import { listen } from '../../src/platform/http/listen.js';
import { createLogger } from '../../src/platform/observability/logger.js';
import { newKey } from '../../src/integrations/keys/api-keys.js';
import { APP_TOKEN, api, appDeps, newCompany, pool, reportInput, unique } from '../support/harness.js';
import { holdReportRow, waitUntilBlocked } from '../support/locks.js';
import { HttpsReceiver } from '../support/https-receiver.js';
import { captureLogs, type LogEntry } from '../support/logs.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const requestLines = (entries: LogEntry[]) => entries.filter((e) => e.msg === 'request completed');

/** A pool pointing at a loopback port where nothing listens: every query fails at once. */
async function unreachablePool(): Promise<Pool> {
  const port = await new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port: p } = server.address() as net.AddressInfo;
      server.close(() => resolve(p));
    });
  });
  return createPool({
    connectionString: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    connectionTimeoutMillis: 1000,
  });
}

describe('request logs', () => {
  it('writes one JSON line per request with method, route template, status, duration, request id and company id', async () => {
    const logs = captureLogs('info');
    const app = createApp(appDeps(pool(), { logger: logs.logger }));
    const { key, companyId } = await newCompany();
    const missing = '6f1c1d1e-0000-4000-8000-000000000000';
    const res = await api(app).get(`/reports/${missing}`).set('X-API-KEY', key).expect(404);

    const lines = requestLines(logs.entries());
    expect(lines).to.have.length(1);
    expect(lines[0]).to.include({
      level: 30,
      method: 'GET',
      route: '/reports/{reportId}',
      status: 404,
      companyId,
      reqId: res.headers['x-request-id'],
    });
    expect(lines[0]!.durationMs).to.be.a('number').at.least(0);
    expect(JSON.stringify(lines[0])).not.to.include(missing);
  });

  it('logs a 5xx at level error with its cause, and a request answered before the validator under its template', async () => {
    const logs = captureLogs('info');
    const db = await unreachablePool();
    let failed: string | undefined;
    try {
      const app = createApp(appDeps(db, { logger: logs.logger }));
      failed = (await api(app).get('/reports/abc').set('X-API-KEY', newKey().key).expect(503)).headers['x-request-id'];
      await api(app).get('/reports/abc').expect(400);
      await api(app).get('/no/such/path').expect(404);
    } finally {
      await db.end();
    }
    const lines = requestLines(logs.entries());
    expect(lines.map((l) => [l.level, l.route, l.status])).to.deep.equal([
      [50, '/reports/{reportId}', 503],
      [30, '/reports/{reportId}', 400],
      [30, 'unmatched', 404],
    ]);
    expect(lines.every((l) => l.companyId === undefined)).to.equal(true);
    const cause = logs.entries().find((e) => e.msg === 'request failed');
    expect(cause).to.include({ level: 50, reqId: failed });
    expect((cause!.err as { code?: string }).code).to.equal('ECONNREFUSED');
  });

  it('logs the route template on the request failed line, never the URL with its query', async () => {
    const logs = captureLogs('info');
    const db = await unreachablePool();
    const restId = unique('crm-secret');
    try {
      const app = createApp(appDeps(db, { logger: logs.logger }));
      await api(app).get(`/reports?restId=${restId}&after=eyJjdXJzb3IiOjF9`).set('X-API-KEY', newKey().key).expect(503);
    } finally {
      await db.end();
    }
    const failed = logs.entries().filter((e) => e.msg === 'request failed');
    expect(failed).to.have.length(1);
    expect(failed[0]).to.include({ method: 'GET', route: '/reports' });
    expect(failed[0]).not.to.have.property('url');
    expect(logs.text()).not.to.include(restId).and.not.to.include('eyJjdXJzb3IiOjF9');
  });

  it('names the company of an application API path', async () => {
    const logs = captureLogs('info');
    const app = createApp(appDeps(pool(), { logger: logs.logger }));
    const { companyId } = await newCompany();
    await api(app)
      .get(`/internal/companies/${companyId}/integration`)
      .set('Authorization', `Bearer ${APP_TOKEN}`)
      .expect(200);
    expect(requestLines(logs.entries())[0]).to.include({
      route: '/internal/companies/{companyId}/integration',
      companyId,
    });
  });

  it('marks a request the caller gave up on as aborted, in its log line and in the metrics', async () => {
    const logs = captureLogs('info');
    const server = await listen(createApp(appDeps(pool(), { logger: logs.logger })), 0, '127.0.0.1');
    const { key, companyId } = await newCompany();
    const restId = unique('abandoned');
    await api().post('/reports/new').set('X-API-KEY', key).send(reportInput({ restId })).expect(200);
    // The test holds the report's row, so the update waits in the database until the caller hangs up.
    const locker = await holdReportRow(pool(), companyId, restId);
    try {
      const request = http.request({
        port: (server.address() as net.AddressInfo).port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/reports/new',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
      });
      request.on('error', () => undefined);
      request.end(JSON.stringify(reportInput({ restId })));
      expect(await waitUntilBlocked(pool(), locker)).to.equal(true);
      request.destroy();
      for (let i = 0; i < 200 && requestLines(logs.entries()).length === 0; i++) await sleep(25);
    } finally {
      await locker.query('COMMIT');
      locker.release();
      server.close();
    }
    expect(requestLines(logs.entries())).to.have.length(1);
    expect(requestLines(logs.entries())[0]).to.include({
      method: 'POST',
      route: '/reports/new',
      companyId,
      aborted: true,
    });
    const metrics = await api().get('/metrics').set('Authorization', `Bearer ${APP_TOKEN}`).expect(200);
    expect(metrics.text).to.match(
      /^http_requests_total\{method="POST",route="\/reports\/new",status="aborted"\} [1-9]/m,
    );
  });

  it('generates an X-Request-Id when the caller sends none and echoes it on the response', async () => {
    const logs = captureLogs('info');
    const app = createApp(appDeps(pool(), { logger: logs.logger }));
    const first = await api(app).get('/healthz').expect(200);
    const second = await api(app).get('/no/such/path').expect(404);
    expect(first.headers['x-request-id']).to.match(UUID);
    expect(second.headers['x-request-id']).to.match(UUID).and.not.equal(first.headers['x-request-id']);
    expect(requestLines(logs.entries()).map((l) => l.reqId)).to.deep.equal([
      first.headers['x-request-id'],
      second.headers['x-request-id'],
    ]);
  });

  it("keeps the caller's X-Request-Id when it looks like an id, and replaces one that does not", async () => {
    const logs = captureLogs('info');
    const app = createApp(appDeps(pool(), { logger: logs.logger }));
    const given = `trace-${unique()}:01HZX3`;
    await api(app).get('/healthz').set('X-Request-Id', given).expect(200).expect('X-Request-Id', given);
    for (const insane of ['has spaces in it', 'x'.repeat(129), '{"msg":"forged"}']) {
      const res = await api(app).get('/healthz').set('X-Request-Id', insane).expect(200);
      expect(res.headers['x-request-id']).to.match(UUID);
    }
    const ids = requestLines(logs.entries()).map((l) => l.reqId);
    expect(ids[0]).to.equal(given);
    expect(ids.slice(1).every((id) => UUID.test(String(id)))).to.equal(true);
  });

  it('never writes API keys, the application token, webhook secrets or Authorization headers', async () => {
    const logs = captureLogs('trace');
    const app = createApp(appDeps(pool(), { logger: logs.logger }));
    const { key, companyId } = await newCompany();
    const auth = { Authorization: `Bearer ${APP_TOKEN}` };
    const wrongToken = `wrong-token-${unique()}-0123456789abcdef`;
    const wrongKey = `irk_${unique()}-not-a-real-key`;

    await api(app).get('/auth').set('X-API-KEY', key).expect(200);
    await api(app).get('/auth').set('X-API-KEY', wrongKey).expect(400);
    await api(app)
      .post('/reports/new')
      .set('X-API-KEY', key)
      .send(reportInput({ notes: 'gate code 1234' }))
      .expect(200);
    await api(app).get('/metrics').set(auth).expect(200);
    await api(app).get('/metrics').set('Authorization', `Bearer ${wrongToken}`).expect(401);
    const webhook = await api(app)
      .put(`/internal/companies/${companyId}/webhook`)
      .set(auth)
      .send({ url: 'https://hooks.example.com/intake' })
      .expect(200);
    const integration = await api(app).get(`/internal/companies/${companyId}/integration`).set(auth).expect(200);
    const newKey = await api(app).post(`/internal/companies/${companyId}/api-keys`).set(auth).expect(201);

    // A failing database makes the service log errors too, with the key still on the request.
    const down = await unreachablePool();
    try {
      await api(createApp(appDeps(down, { logger: logs.logger })))
        .get('/auth')
        .set('X-API-KEY', key)
        .expect(503);
    } finally {
      await down.end();
    }

    const secrets = [
      key,
      wrongKey,
      APP_TOKEN,
      wrongToken,
      webhook.body.secret,
      integration.body.secret,
      newKey.body.key,
    ];
    expect(secrets.every((s) => typeof s === 'string' && s.length >= 20)).to.equal(true);
    const text = logs.text();
    expect(requestLines(logs.entries())).to.have.length(9);
    expect(logs.entries().some((e) => e.level === 50 && e.msg !== 'request completed')).to.equal(true);
    for (const secret of secrets) expect(text).not.to.include(secret);
    expect(text).not.to.match(/authorization|x-api-key|bearer|whsec_/i);
  });

  it('never writes the secrets of a rotation or the signatures of test deliveries, sent or failed', async () => {
    const logs = captureLogs('trace');
    const receiver = await HttpsReceiver.start();
    const app = createApp(appDeps(pool(), { logger: logs.logger, notifier: receiver.notifier() }));
    const auth = { Authorization: `Bearer ${APP_TOKEN}` };
    const { companyId } = await newCompany();
    try {
      const path = `/${unique('hook')}`;
      const company = `/internal/companies/${companyId}`;
      const set = await api(app)
        .put(`${company}/webhook`)
        .set(auth)
        .send({ url: receiver.url(path) })
        .expect(200);
      const rotated = await api(app).post(`${company}/webhook/secret`).set(auth).send({}).expect(200);
      const integration = await api(app).get(`${company}/integration`).set(auth).expect(200);
      await api(app).post(`${company}/webhook/test`).set(auth).send({}).expect(200);
      // A failed test is answered 502 and logged at error, with its cause.
      receiver.on(path, { status: 500 });
      await api(app).post(`${company}/webhook/test`).set(auth).send({}).expect(502);

      const signatures = receiver.at(path).flatMap((r) => String(r.headers['webhook-signature']).split(' '));
      expect(signatures).to.have.length(4);
      const secrets = [set.body.secret, rotated.body.secret, integration.body.secret, ...signatures];
      const text = logs.text();
      expect(logs.entries().some((e) => e.level === 50 && e.msg === 'request failed')).to.equal(true);
      for (const secret of secrets) {
        expect(secret).to.be.a('string').with.length.above(20);
        expect(text).not.to.include(secret);
        expect(text).not.to.include(secret.replace(/^(whsec_|v1,)/, ''));
      }
      expect(text).not.to.match(/whsec_|webhook-signature/i);
    } finally {
      await receiver.stop();
    }
  });

  it('honours LOG_LEVEL: at warn, requests that succeed leave no line but failures do', async () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://db.internal/intake', APP_TOKEN, LOG_LEVEL: 'warn' });
    expect(config.logLevel).to.equal('warn');
    expect(() => loadConfig({ LOG_LEVEL: 'verbose' })).to.throw(ConfigError, /LOG_LEVEL/);

    const logs = captureLogs(config.logLevel);
    await api(createApp(appDeps(pool(), { logger: logs.logger })))
      .get('/healthz')
      .expect(200);
    expect(logs.entries()).to.deep.equal([]);
    const down = await unreachablePool();
    try {
      await api(createApp(appDeps(down, { logger: logs.logger })))
        .get('/readyz')
        .expect(503);
    } finally {
      await down.end();
    }
    expect(requestLines(logs.entries()).map((l) => [l.level, l.route, l.status])).to.deep.equal([[50, '/readyz', 503]]);
    expect(createLogger('silent').isLevelEnabled('fatal')).to.equal(false);
  });
});
