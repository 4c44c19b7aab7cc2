import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { APP_TOKEN, api, newApp, newCompany, reportInput, unique } from '../support/harness.js';
import { HttpsReceiver } from '../support/https-receiver.js';
import { until } from '../support/wait.js';

const auth = { Authorization: `Bearer ${APP_TOKEN}` };

/** Nearest-rank percentile of durations in ms. */
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.ceil((p / 100) * values.length) - 1]!;

describe('publishing to a slow receiver', function () {
  this.timeout(90_000);
  let receiver: HttpsReceiver;

  before(async () => {
    receiver = await HttpsReceiver.start();
  });

  after(async () => {
    await receiver.stop();
  });

  it('takes no database connection from other companies: twelve 8 s deliveries on a pool of 10', async () => {
    // One server process as in production: a pool of 10 connections (newApp's), the default place count;
    // but one company may hold twelve of the places, as the point here is the pool, not the share.
    const server = newApp({
      notifier: receiver.notifier({ timeoutMs: 15_000, maxInFlightPerCompany: 12 }),
    });
    try {
      expect(server.pool.options.max).to.equal(10);
      const publisher = await newCompany();
      const path = `/${unique('slow')}`;
      receiver.on(path, { status: 204, waitFor: () => sleep(8_000) });
      await api()
        .put(`/internal/companies/${publisher.companyId}/webhook`)
        .set(auth)
        .send({ url: receiver.url(path) })
        .expect(200);
      const reports: string[] = [];
      for (let i = 0; i < 12; i++) {
        const res = await api().post('/reports/new').set('X-API-KEY', publisher.key).send(reportInput()).expect(200);
        reports.push(res.body.id);
      }
      const other = await newCompany();
      const { body: otherReport } = await api(server.app)
        .post('/reports/new')
        .set('X-API-KEY', other.key)
        .send(reportInput())
        .expect(200);

      let answered = 0;
      const publishes = reports.map((id) =>
        api(server.app)
          .post(`/internal/companies/${publisher.companyId}/reports/${id}/publish`)
          .set(auth)
          .send({ publishedUrl: 'https://r.example.com/1', notifyIntegration: true })
          .then((res) => {
            answered++;
            return res;
          }),
      );
      await until(() => receiver.at(path).length === 12, 'all twelve deliveries in flight', 7_000);

      // Meanwhile, on the same process: another company's calls, and the readiness probe.
      const durations: number[] = [];
      const timed = async (call: () => PromiseLike<unknown>) => {
        const started = performance.now();
        await call();
        durations.push(performance.now() - started);
      };
      for (let round = 0; round < 10; round++) {
        await Promise.all([
          timed(() => api(server.app).get(`/reports/${otherReport.id}`).set('X-API-KEY', other.key).expect(200)),
          timed(() => api(server.app).get('/reports').set('X-API-KEY', other.key).expect(200)),
          timed(() => api(server.app).post('/reports/new').set('X-API-KEY', other.key).send(reportInput()).expect(200)),
          timed(() => api(server.app).get('/auth').set('X-API-KEY', other.key).expect(200)),
          api(server.app).get('/readyz').expect(200),
        ]);
      }
      // The proof: all of it was answered while every delivery was still waiting on the receiver.
      expect(answered, 'publishes answered before the other calls were done').to.equal(0);
      console.log(
        `      other company's calls during twelve 8 s deliveries: n=${durations.length}, ` +
          `p50 ${percentile(durations, 50).toFixed(0)} ms, p99 ${percentile(durations, 99).toFixed(0)} ms`,
      );

      for (const res of await Promise.all(publishes)) {
        expect(res.status).to.equal(200);
        expect(res.body.webhook).to.include({ outcome: 'sent', status: 204 });
      }
    } finally {
      await server.pool.end();
    }
  });
});
