import { createServer } from 'node:net';
import { expect } from 'chai';
import { APP_TOKEN, api, newCompany, pool, reportInput, unique } from '../support/harness.js';
import { holdReportRow, waitUntilBlocked } from '../support/locks.js';
import { sample } from '../support/metrics.js';
import { refusesConnections, runToExit, startServer, type RunningServer } from '../support/server-process.js';

// A request budget the tests never reach: one asks on a key as fast as it is answered until a worker
// replaced listens, seconds on a loaded machine.
const WORKERS = { WEB_CONCURRENCY: '2', RATE_LIMIT_PER_MINUTE: '1000000' };

/** Starts the service with two workers; resolves once both listen, with their pids. */
async function startCluster(): Promise<{ server: RunningServer; workers: number[] }> {
  const server = await startServer(undefined, WORKERS);
  const deadline = Date.now() + 60_000;
  while (listeners(server).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const workers = listeners(server);
  expect(workers, 'two workers listen').to.have.length(2);
  expect(workers).not.to.include(server.child.pid);
  return { server, workers };
}

const listeners = (server: RunningServer) =>
  [...new Set(server.logs.filter((e) => e.msg === 'listening').map((e) => e.pid as number))].filter(
    (pid) => !server.logs.some((e) => e.msg === 'worker exited; starting another' && e.workerPid === pid),
  );

/** GET /auth on a new connection each time (so that the primary hands it to the next worker): the pid that answered. */
async function authOnNewConnection(server: RunningServer, key: string): Promise<number> {
  const reqId = unique('req');
  await api(server.baseUrl)
    .get('/auth')
    .set('X-API-KEY', key)
    .set('Connection', 'close')
    .set('X-Request-Id', reqId)
    .expect(200);
  const entry = await server.logged('request completed', { reqId });
  return entry.pid as number;
}

describe('WEB_CONCURRENCY: workers of one port (node:cluster)', function () {
  // Each wait for workers to listen is bounded by 60 s; together they stay within this.
  this.timeout(180_000);
  let server: RunningServer | undefined;

  afterEach(() => server?.kill());

  it('serves from two workers, and replaces one killed with SIGKILL while the other keeps answering', async () => {
    const started = await startCluster();
    server = started.server;
    const { key } = await newCompany();
    const served = new Set<number>();
    for (let i = 0; i < 10; i++) served.add(await authOnNewConnection(server, key));
    expect([...served].sort()).to.deep.equal([...started.workers].sort());

    const [victim, survivor] = started.workers as [number, number];
    process.kill(victim, 'SIGKILL');
    const exit = await server.logged('worker exited; starting another', { workerPid: victim });
    expect(exit).to.include({ signal: 'SIGKILL' });
    // Until the replacement listens, and after: every request is answered.
    // Bounded by time, not by a count of requests: a worker starting on a loaded machine takes seconds.
    const answeredBy = new Set<number>();
    const deadline = Date.now() + 60_000;
    while (listeners(server).length < 2 && Date.now() < deadline)
      answeredBy.add(await authOnNewConnection(server, key));
    const replacement = listeners(server).find((pid) => pid !== survivor);
    expect(replacement, 'a replacement worker listens').to.be.a('number');
    expect(replacement).not.to.equal(victim);
    for (let i = 0; i < 10; i++) answeredBy.add(await authOnNewConnection(server, key));
    expect(answeredBy).to.include(replacement);
    expect(answeredBy).not.to.include(victim);

    // A second death within the minute waits twice as long before its replacement (no spinning crash loop).
    expect(exit).to.include({ restartInMs: 100 });
    process.kill(replacement!, 'SIGKILL');
    expect(await server.logged('worker exited; starting another', { workerPid: replacement })).to.include({
      restartInMs: 200,
    });
  });

  it('stops start-up with exit 1 when the port is taken, with workers or without, its workers gone first', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((taken.address() as { port: number }).port);
      for (const workers of ['1', '2']) {
        const { code, stderr } = await runToExit({ WEB_CONCURRENCY: workers, PORT: port });
        expect(code, `${workers} worker(s)`).to.equal(1);
        expect(stderr, `${workers} worker(s)`).to.match(/^Start-up failed: .*EADDRINUSE/m);
        // A worker still starting when its primary exits dies on an unhandled EPIPE, with a stack trace.
        expect(stderr, `${workers} worker(s)`).not.to.match(/EPIPE|Unhandled|^\s+at /m);
      }
    } finally {
      taken.close();
    }
  });

  it('aggregates the metrics of every worker in /metrics', async () => {
    server = (await startCluster()).server;
    const running = server;
    const scrape = async () =>
      (await api(running.baseUrl).get('/metrics').set('Authorization', `Bearer ${APP_TOKEN}`).expect(200)).text;
    const labels = { method: 'GET', route: '/healthz', status: '200' };
    const before = sample(await scrape(), 'http_requests_total', labels);
    const served = new Set<number>();
    for (let i = 0; i < 10; i++) {
      const reqId = unique('health');
      await api(running.baseUrl).get('/healthz').set('Connection', 'close').set('X-Request-Id', reqId).expect(200);
      served.add((await running.logged('request completed', { reqId })).pid as number);
    }
    expect(served.size, 'both workers answered').to.equal(2);
    const text = await scrape();
    expect(sample(text, 'http_requests_total', labels) - before).to.equal(10);
    expect(sample(text, 'http_request_duration_seconds_count', labels) - before).to.equal(10);
    // A gauge of both workers' pools, summed: each holds its key cache's connection outside the pool.
    expect(text).to.match(/^db_pool_connections_idle \d+$/m);
  });

  it('answers /metrics 503 when a worker does not hand its metrics over in time', async () => {
    const started = await startCluster();
    server = started.server;
    const running = server;
    const [stuck] = started.workers as [number, number];
    process.kill(stuck, 'SIGSTOP');
    try {
      // The primary hands one new connection to the stopped worker (which never takes it) and the
      // next to the other, whose scrape waits for the stopped one's metrics.
      const scrapes = [1, 2].map(() =>
        api(running.baseUrl)
          .get('/metrics')
          .set('Authorization', `Bearer ${APP_TOKEN}`)
          .set('Connection', 'close')
          .then((res) => res),
      );
      const first = await Promise.race(scrapes);
      expect(first.status).to.equal(503);
      expect(first.body).to.deep.equal({ error: 'metrics unavailable: Operation timed out.' });
      process.kill(stuck, 'SIGCONT');
      await Promise.allSettled(scrapes);
    } finally {
      process.kill(stuck, 'SIGCONT');
    }
  });

  it('on SIGTERM drains every worker, the request in flight answered, then exits 0', async () => {
    const { key, companyId } = await newCompany();
    const restId = unique('slow');
    await api().post('/reports/new').set('X-API-KEY', key).send(reportInput({ restId })).expect(200);
    const started = await startCluster();
    server = started.server;
    const running = server;

    const locker = await holdReportRow(pool(), companyId, restId);
    try {
      let answered = false;
      const slow = api(running.baseUrl)
        .post('/reports/new')
        .set('X-API-KEY', key)
        .send(reportInput({ restId, notes: 'sent before SIGTERM' }))
        .then((res) => {
          answered = true;
          return res;
        });
      expect(await waitUntilBlocked(pool(), locker, () => answered)).to.equal(true);

      running.child.kill('SIGTERM');
      for (const pid of started.workers) await running.logged(/^shutting down/, { pid });
      // The primary closes the shared socket once every worker has closed its server (bounded wait).
      let refused = false;
      for (let i = 0; i < 100 && !refused; i++) {
        refused = await refusesConnections(running.port);
        if (!refused) await new Promise((r) => setTimeout(r, 50));
      }
      expect(refused).to.equal(true);
      expect(running.child.exitCode).to.equal(null);

      await locker.query('COMMIT');
      const res = await slow;
      expect(res.status).to.equal(200);
    } finally {
      locker.release();
    }
    expect(await running.exited).to.equal(0);
    const stopped = running.logs.filter((e) => e.msg === 'stopped').map((e) => e.pid);
    expect([...stopped].sort()).to.deep.equal([...started.workers, running.child.pid].sort());
    expect(stopped.at(-1), 'the primary stops last').to.equal(running.child.pid);
    expect(running.logs.filter((e) => e.level >= 50)).to.deep.equal([]);
  });
});
