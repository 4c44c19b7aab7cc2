import { expect } from 'chai';
import request from 'supertest';
import { api, newCompany, pool, reportInput, unique } from '../support/harness.js';
import { holdReportRow, waitUntilBlocked } from '../support/locks.js';
import { refusesConnections, startServer, type RunningServer } from '../support/server-process.js';
import { buildProduction } from '../../scripts/production-build.js';

describe('graceful shutdown of a real server process', function () {
  this.timeout(90_000);
  let server: RunningServer | undefined;

  afterEach(() => server?.kill());

  it('on SIGTERM refuses new connections, finishes the request in flight, then exits 0', async () => {
    const { key, companyId } = await newCompany();
    const restId = unique('slow');
    await api().post('/reports/new').set('X-API-KEY', key).send(reportInput({ restId })).expect(200);
    server = await startServer();
    const running = server;

    // Keep-alive outlasts a load balancer's idle timeout (Node announces it in a header).
    await api(running.baseUrl)
      .get('/healthz')
      .set('Connection', 'keep-alive')
      .expect(200)
      .expect('Keep-Alive', 'timeout=65');

    // The test holds the report's row lock, so an update of it waits in the database: a slow request.
    const locker = await holdReportRow(pool(), companyId, restId);
    try {
      const slow = api(running.baseUrl)
        .post('/reports/new')
        .set('X-API-KEY', key)
        .send(reportInput({ restId, notes: 'sent before SIGTERM' }))
        .then((res) => res);
      let answered: { status: number; text: string } | undefined;
      void slow.then(
        (res) => {
          answered = res;
        },
        () => undefined,
      );
      const waiting = await waitUntilBlocked(pool(), locker, () => answered !== undefined);
      expect(
        waiting,
        `the request waits for the lock (it answered ${answered?.status} ${answered?.text}; ${JSON.stringify(running.logs.filter((e) => e.level >= 40))})`,
      ).to.equal(true);

      running.child.kill('SIGTERM');
      await running.logged(/^shutting down/);
      expect(await refusesConnections(running.port)).to.equal(true);
      expect(running.child.exitCode).to.equal(null);

      await locker.query('COMMIT');
      const res = await slow;
      expect(res.status).to.equal(200);
      expect(res.body.result).to.equal('ok');
    } finally {
      locker.release();
    }

    expect(await running.exited).to.equal(0);
    const messages = running.logs.map((e) => e.msg);
    expect(messages.indexOf('stopped')).to.be.greaterThan(messages.lastIndexOf('request completed'));
    expect(running.logs.filter((e) => e.msg === 'request completed').map((e) => [e.route, e.status])).to.deep.equal([
      ['/healthz', 200],
      ['/reports/new', 200],
    ]);
    const { rows } = await pool().query('SELECT notes FROM reports WHERE company_id = $1 AND rest_id = $2', [
      companyId,
      restId,
    ]);
    expect(rows).to.deep.equal([{ notes: 'sent before SIGTERM' }]);
  });

  it('runs the production build (npm run build, then npm run start:production) the same way', async () => {
    // Built for production and asked to build its validators at start: ready once it has.
    server = await startServer(buildProduction(), { WARM_VALIDATORS: 'true' });
    const { key } = await newCompany();
    await server.logged('validators built');
    await api(server.baseUrl).get('/readyz').expect(200);
    await api(server.baseUrl).get('/auth').set('X-API-KEY', key).expect(200);
    await api(server.baseUrl).post('/reports/new').set('X-API-KEY', key).send(reportInput()).expect(200);
    // Paths outside the source tree resolve from dist/ as from src/: the document, docs and migrations.
    await request(server.baseUrl).get('/openapi.json').expect(200);
    await request(server.baseUrl).get('/docs').expect(200);
    server.child.kill('SIGTERM');
    expect(await server.exited).to.equal(0);
  });

  it('exits 0 on SIGINT when idle', async () => {
    server = await startServer();
    await api(server.baseUrl).get('/readyz').expect(200);
    server.child.kill('SIGINT');
    expect(await server.exited).to.equal(0);
    expect(server.logs.map((e) => e.msg)).to.include('stopped');
  });
});
