import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import request from 'supertest';
import { APP_TOKEN, api, databaseUrl, newCompany, pool, reportInput, unique } from '../support/harness.js';
import { holdReportRow, waitUntilBlocked } from '../support/locks.js';
import type { LogEntry } from '../support/logs.js';
import { buildProduction } from '../../scripts/production-build.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface RunningServer {
  child: ChildProcess;
  baseUrl: string;
  port: number;
  logs: LogEntry[];
  /** Resolves with the first log line that has this message. */
  logged(msg: string | RegExp): Promise<LogEntry>;
  exited: Promise<number | null>;
}

/**
 * Starts the server on a free port against the test database: `node --import tsx src/server.ts` as
 * `npm start` does, or the given node arguments.
 */
async function startServer(args = ['--import', 'tsx', 'src/server.ts']): Promise<RunningServer> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl(),
      APP_TOKEN,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: '30000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const logs: LogEntry[] = [];
  const waiters: { match: (e: LogEntry) => boolean; resolve: (e: LogEntry) => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const entry = JSON.parse(line) as LogEntry;
    logs.push(entry);
    for (const w of waiters.filter((w) => w.match(entry))) w.resolve(entry);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const logged = (msg: string | RegExp) => {
    const match = (e: LogEntry) => (typeof msg === 'string' ? e.msg === msg : msg.test(e.msg));
    const seen = logs.find(match);
    if (seen) return Promise.resolve(seen);
    return Promise.race([
      new Promise<LogEntry>((resolve) => waiters.push({ match, resolve })),
      exited.then((code) => {
        throw new Error(`the server exited (${code}) before logging "${msg}"`);
      }),
    ]);
  };
  const baseUrl = String((await logged('listening')).baseUrl);
  return { child, baseUrl, port: Number(new URL(baseUrl).port), logs, logged, exited };
}

/** Whether a new TCP connection to the port is refused. */
function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

describe('graceful shutdown of a real server process', function () {
  this.timeout(90_000);
  let server: RunningServer | undefined;

  afterEach(() => {
    if (server?.child.exitCode === null) server.child.kill('SIGKILL');
  });

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
    server = await startServer(buildProduction());
    const { key } = await newCompany();
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
