import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { APP_TOKEN, api, newCompany, pool, reportInput, unique, type TestCompany } from '../support/harness.js';
import { HttpsReceiver } from '../support/https-receiver.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { until } from '../support/wait.js';

/**
 * Durable deliveries across service processes started as `npm start` starts one, on the test
 * database, trusting a real local HTTPS receiver (NODE_EXTRA_CA_CERTS): crashes, several processes
 * sharing the attempts, SIGTERM, and a partner following the feed while processes publish at once.
 */

const auth = { Authorization: `Bearer ${APP_TOKEN}` };

describe('durable deliveries across service processes', function () {
  this.timeout(120_000);
  let receiver: HttpsReceiver;
  let caDir: string;
  let servers: RunningServer[] = [];

  before(async () => {
    receiver = await HttpsReceiver.start();
    caDir = await mkdtemp(path.join(tmpdir(), 'intake-ca-'));
    await writeFile(path.join(caDir, 'ca.pem'), receiver.ca);
  });
  afterEach(() => {
    for (const server of servers) server.kill();
    servers = [];
  });
  after(async () => {
    await receiver.stop();
    await rm(caDir, { recursive: true, force: true });
  });

  /**
   * Many publishes at once queue for each process's pool: these processes wait for a connection as long as
   * the service does by default, not the short wait of the crash tests, so a busy machine does not turn the
   * queue into 503s.
   */
  const patient = { DATABASE_CONNECT_TIMEOUT_MS: '5000' };

  /** A service process making background attempts on a short schedule, its attempts and waits short too. */
  async function start(env: Record<string, string> = {}): Promise<RunningServer> {
    const server = await startServer(undefined, {
      WEBHOOK_WORKER: 'true',
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
      NODE_EXTRA_CA_CERTS: path.join(caDir, 'ca.pem'),
      WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s,1s,1s,1s,1s',
      WEBHOOK_RETRY_POLL_MS: '100',
      WEBHOOK_TIMEOUT_MS: '1000',
      DATABASE_CONNECT_TIMEOUT_MS: '1000',
      ...env,
    });
    servers.push(server);
    return server;
  }

  async function companyWithAddress(): Promise<TestCompany & { path: string }> {
    const company = await newCompany();
    const hook = `/${unique('hook')}`;
    await api()
      .put(`/internal/companies/${company.companyId}/webhook`)
      .set(auth)
      .send({ url: receiver.url(hook) })
      .expect(200);
    return { ...company, path: hook };
  }

  /**
   * Creates `count` reports of the company and publishes each, notifying, on the servers in turn (with
   * whenDeliveryFails as given, "fail" when absent); the event ids of the publishes.
   */
  async function publishEach(
    company: TestCompany,
    count: number,
    on: RunningServer[],
    whenDeliveryFails?: 'retry',
  ): Promise<string[]> {
    return Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const target = on[i % on.length]!.baseUrl;
        const { body } = await api(target)
          .post('/reports/new')
          .set('X-API-KEY', company.key)
          .send(reportInput())
          .expect(200);
        const res = await api(target)
          .post(`/internal/companies/${company.companyId}/reports/${body.id}/publish`)
          .set(auth)
          .send({ publishedUrl: 'https://r.example.com/1', notifyIntegration: true, whenDeliveryFails })
          .expect(200);
        return res.body.webhook.eventId as string;
      }),
    );
  }

  const statuses = async (companyId: string) =>
    (
      await pool().query<{ id: string; status: string; attempts: number }>(
        'SELECT id, status, attempts FROM webhook_events WHERE company_id = $1',
        [companyId],
      )
    ).rows;

  async function allDelivered(companyId: string, count: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const rows = await statuses(companyId);
      if (rows.length === count && rows.every((r) => r.status === 'delivered')) return;
      if (Date.now() > deadline) throw new Error(`not all delivered: ${JSON.stringify(rows.map((r) => r.status))}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  const requestsOf = (hook: string) => {
    const byId = new Map<string, number>();
    for (const r of receiver.at(hook)) {
      const id = String(r.headers['webhook-id']);
      byId.set(id, (byId.get(id) ?? 0) + 1);
    }
    return byId;
  };

  it('delivers every pending event after kill -9 of every process, attempts cut short included', async () => {
    const [one, two] = [await start(), await start()];
    const company = await companyWithAddress();
    // Each first attempt fails, the retries hang: when the processes die some are cut short.
    receiver.on(company.path, { status: 500 });
    const ids = await publishEach(company, 20, [one!, two!], 'retry');
    receiver.on(company.path, 'hang');
    await until(() => receiver.at(company.path).length > 20, 'retries in flight', 10_000);
    one!.kill();
    two!.kill();
    await Promise.all([one!.exited, two!.exited]);
    receiver.on(company.path, { status: 204 });
    await start();
    // A lease cut short by the crash runs out (the attempt's limit, two waits for connections, a margin).
    await allDelivered(company.companyId, 20, 30_000);
    const byId = requestsOf(company.path);
    expect([...byId.keys()].sort()).to.deep.equal([...ids].sort());
    const delivered = receiver.at(company.path).filter((r) => r.headers['webhook-id'] !== undefined);
    expect(delivered.length).to.be.at.least(40);
  });

  it('makes each attempt on one process only when two share the events', async () => {
    const [one, two] = [await start(patient), await start(patient)];
    const company = await companyWithAddress();
    receiver.on(company.path, { status: 503, headers: { 'Retry-After': '1' } });
    const ids = await publishEach(company, 40, [one!, two!], 'retry');
    receiver.on(company.path, { status: 204 });
    await allDelivered(company.companyId, 40, 20_000);
    const byId = requestsOf(company.path);
    // The publish's own attempt (503; none when the company's delivery places were all taken), then
    // exactly one more, the 204: never an event attempted by both processes.
    expect([...byId.keys()].sort()).to.deep.equal([...ids].sort());
    for (const row of await statuses(company.companyId)) {
      expect(byId.get(row.id), row.id).to.equal(row.attempts);
      expect(row.attempts).to.be.within(1, 2);
    }
  });

  it('hands its events back on SIGTERM: another process makes their attempts without waiting for the lease', async () => {
    // A long lease (1 s attempt + 2 × 10 s waits + 5 s): only the hand-back gets the attempt made in time,
    // however long the next process takes to start on a busy machine.
    const leaving = await start({ SHUTDOWN_TIMEOUT_MS: '300', DATABASE_CONNECT_TIMEOUT_MS: '10000' });
    const company = await companyWithAddress();
    receiver.on(company.path, { status: 500 });
    const [id] = await publishEach(company, 1, [leaving], 'retry');
    receiver.on(company.path, 'hang');
    await until(() => receiver.at(company.path).length === 2, 'the retry in flight', 10_000);
    process.kill(leaving.child.pid!, 'SIGTERM');
    expect(await leaving.exited).to.equal(0);
    const { rows } = await pool().query<{ leased: boolean }>(
      'SELECT leased_until IS NOT NULL AS leased FROM webhook_events WHERE company_id = $1 AND id = $2',
      [company.companyId, id],
    );
    expect(rows).to.deep.equal([{ leased: false }]);
    receiver.on(company.path, { status: 204 });
    const started = Date.now();
    await start();
    await allDelivered(company.companyId, 1, 20_000);
    // Well before the leaving process's lease would have run out.
    expect(Date.now() - started).to.be.below(20_000);
  });

  it('shows a partner following the feed every event exactly once while two processes publish at once', async () => {
    const [one, two] = [await start(patient), await start(patient)];
    const company = await newCompany();
    const seen: string[] = [];
    let after: string | undefined;
    let publishing = true;
    const follow = async () => {
      // Until the publishes are over and three reads in a row found nothing new.
      for (let turn = 0, idle = 0; idle < 3; turn++) {
        const target = [one!, two!][turn % 2]!.baseUrl;
        const query = after === undefined ? '?limit=7' : `?limit=7&after=${after}`;
        const { body } = await api(target).get(`/events${query}`).set('X-API-KEY', company.key).expect(200);
        for (const event of body as { id: string }[]) seen.push(event.id);
        after = seen.at(-1) ?? after;
        idle = publishing || (body as unknown[]).length > 0 ? 0 : idle + 1;
        if ((body as unknown[]).length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const poller = follow();
    // No address: each publish records its event (delivery none) in its own commit, on either process.
    const ids = await publishEach(company, 120, [one!, two!]);
    publishing = false;
    await poller;
    expect(new Set(seen).size).to.equal(seen.length);
    expect([...seen].sort()).to.deep.equal([...ids].sort());
  });
});
