import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import type { Response } from 'supertest';
import { APP_TOKEN, api, databaseUrl, newCompany, reportInput, unique } from '../support/harness.js';
import { HttpsReceiver } from '../support/https-receiver.js';
import { hasPgBouncer, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { runToExit, startServer, type RunningServer } from '../support/server-process.js';

const bearer = { Authorization: `Bearer ${APP_TOKEN}` };
const INSPECTOR = { name: 'Dana Inspector', email: 'dana@example.com' };

/** The answers a process logged with status 5xx. */
const failures = (server: RunningServer) =>
  server.logs.filter((e) => e.msg === 'request completed' && Number(e.status) >= 500);

describe('behind PgBouncer 1.18 in transaction mode', function () {
  this.timeout(120_000);
  let bouncer: PgBouncer | undefined;
  let servers: RunningServer[] = [];

  before(async () => {
    if (!hasPgBouncer()) throw new Error('pgbouncer is not installed (Debian: apt-get install -y pgbouncer)');
    bouncer = await startPgBouncer(databaseUrl());
  });

  afterEach(() => {
    for (const server of servers) server.kill();
    servers = [];
  });

  after(async () => {
    await bouncer?.stop();
  });

  /** A service process with its pool through PgBouncer and its migrations and LISTEN direct. */
  async function startBehindBouncer(env: Record<string, string> = {}): Promise<RunningServer> {
    const server = await startServer(undefined, {
      DATABASE_URL: bouncer!.url,
      DATABASE_MIGRATION_URL: databaseUrl(),
      DATABASE_STATEMENT_TIMEOUT_MS: '0',
      ...env,
    });
    servers.push(server);
    return server;
  }

  it('two processes with DATABASE_PREPARED_STATEMENTS=false: creates, restId updates across them, paging, gets and revocation, no 5xx', async () => {
    const a = await startBehindBouncer({ DATABASE_PREPARED_STATEMENTS: 'false' });
    const b = await startBehindBouncer({ DATABASE_PREPARED_STATEMENTS: 'false' });
    const [apiA, apiB] = [api(a.baseUrl), api(b.baseUrl)];
    const { key, companyId } = await newCompany([INSPECTOR]);

    // Creates, alternating between the processes, concurrently so that transactions share server connections.
    const restIds = Array.from({ length: 12 }, () => unique('crm'));
    const created = await Promise.all(
      restIds.map((restId, i) =>
        (i % 2 ? apiB : apiA)
          .post('/reports/new')
          .set('X-API-KEY', key)
          .send(
            reportInput({
              restId,
              inspectionDate: `2026-03-${String(10 + i).padStart(2, '0')}`,
              inspectorEmails: INSPECTOR.email,
              invoiceItems: ['Home inspection: $450'],
            }),
          )
          .expect(200),
      ),
    );
    const ids = created.map((res) => (res.body as { id: string }).id);

    // Each report updated by restId through the process that did not create it: the same report.
    const updated = await Promise.all(
      restIds.map((restId, i) =>
        (i % 2 ? apiA : apiB)
          .post('/reports/new')
          .set('X-API-KEY', key)
          .send(reportInput({ restId, inspectionDate: `2026-03-${String(10 + i).padStart(2, '0')}`, notes: 'updated' }))
          .expect(200),
      ),
    );
    expect(updated.map((res) => (res.body as { id: string }).id)).to.deep.equal(ids);

    // Paging through the Link header, each page from the other process: every report once, newest first.
    const listed: { id: string; inspectorNotes: string }[] = [];
    let next: string | undefined = '/reports?limit=5';
    for (let page = 0; next && page < 10; page++) {
      const res: Response = await (page % 2 ? apiB : apiA).get(next).set('X-API-KEY', key).expect(200);
      listed.push(...(res.body as { id: string; inspectorNotes: string }[]));
      next = /<([^>]+)>; rel="next"/.exec(res.headers.link ?? '')?.[1];
    }
    expect(listed.map((r) => r.id)).to.deep.equal([...ids].reverse());
    expect(listed.every((r) => r.inspectorNotes === 'updated')).to.equal(true);

    // Gets, concurrently, through both.
    const reads = await Promise.all(
      ids.flatMap((id) => [apiA, apiB].map((target) => target.get(`/reports/${id}`).set('X-API-KEY', key).expect(200))),
    );
    expect(reads.map((res) => (res.body as { inspectorName: string }).inspectorName)).to.deep.equal(
      ids.flatMap(() => [INSPECTOR.name, INSPECTOR.name]),
    );

    // Revocation through one process is refused by the other on its very next request.
    await apiA.get('/auth').set('X-API-KEY', key).expect(200);
    await apiB.get('/auth').set('X-API-KEY', key).expect(200);
    const keys = await apiA.get(`/internal/companies/${companyId}/api-keys`).set(bearer).expect(200);
    await apiA
      .delete(`/internal/companies/${companyId}/api-keys/${(keys.body as { id: string }[])[0]!.id}`)
      .set(bearer)
      .expect(204);
    await apiB.get('/auth').set('X-API-KEY', key).expect(400);
    await apiA.get('/auth').set('X-API-KEY', key).expect(400);

    expect([...failures(a), ...failures(b)]).to.deep.equal([]);
  });

  it('two processes share the background attempts of events there: each made once, the feed read through either', async () => {
    const receiver = await HttpsReceiver.start();
    const caDir = await mkdtemp(path.join(tmpdir(), 'intake-ca-'));
    try {
      await writeFile(path.join(caDir, 'ca.pem'), receiver.ca);
      const env = {
        DATABASE_PREPARED_STATEMENTS: 'false',
        WEBHOOK_WORKER: 'true',
        WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
        NODE_EXTRA_CA_CERTS: path.join(caDir, 'ca.pem'),
        WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s',
        WEBHOOK_RETRY_POLL_MS: '100',
      };
      const processes = [await startBehindBouncer(env), await startBehindBouncer(env)];
      const { key, companyId } = await newCompany();
      const hook = `/${unique('hook')}`;
      await api()
        .put(`/internal/companies/${companyId}/webhook`)
        .set(bearer)
        .send({ url: receiver.url(hook) })
        .expect(200);
      receiver.on(hook, { status: 503, headers: { 'Retry-After': '1' } });
      const eventIds = await Promise.all(
        Array.from({ length: 12 }, async (_, i) => {
          const target = api(processes[i % 2]!.baseUrl);
          const { body } = await target.post('/reports/new').set('X-API-KEY', key).send(reportInput()).expect(200);
          const res = await target
            .post(`/internal/companies/${companyId}/reports/${body.id}/publish`)
            .set(bearer)
            .send({ publishedUrl: 'https://r.example.com/1', notifyIntegration: true, whenDeliveryFails: 'retry' })
            .expect(200);
          return (res.body as { webhook: { eventId: string } }).webhook.eventId;
        }),
      );
      receiver.on(hook, { status: 204 });
      const delivered = async () => {
        const { body } = await api(processes[0]!.baseUrl).get('/events?limit=100').set('X-API-KEY', key).expect(200);
        return body as { id: string; delivery: { status: string; attempts: number } }[];
      };
      let events = await delivered();
      for (
        let tries = 0;
        tries < 150 && (events.length < eventIds.length || !events.every((e) => e.delivery.status === 'delivered'));
        tries++
      ) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        events = await delivered();
      }
      expect(events.map((e) => e.id).sort()).to.deep.equal([...eventIds].sort());
      expect(events.map((e) => e.delivery.status)).to.deep.equal(eventIds.map(() => 'delivered'));
      // Each event: the publish's attempt (503; none when the company's places were taken), then the 204,
      // never made by both processes.
      const requests = receiver.at(hook).map((r) => String(r.headers['webhook-id']));
      for (const event of events) {
        expect(requests.filter((id) => id === event.id)).to.have.length(event.delivery.attempts);
        expect(event.delivery.attempts).to.be.within(1, 2);
      }
      expect([...failures(processes[0]!), ...failures(processes[1]!)]).to.deep.equal([]);
    } finally {
      await receiver.stop();
      await rm(caDir, { recursive: true, force: true });
    }
  });

  it('named (prepared) statements, the default, fail there: the reason for DATABASE_PREPARED_STATEMENTS=false', async () => {
    const a = await startBehindBouncer();
    const b = await startBehindBouncer();
    const { key } = await newCompany();
    // Writes, since repeated reads are answered from each process's report cache: every create runs the
    // named upsert on whichever server connection PgBouncer lends for its transaction.
    const statuses: number[] = [];
    for (let round = 0; round < 10 && !statuses.some((s) => s >= 500); round++) {
      const answers = await Promise.all(
        [a, b, a, b, a, b].map((server) =>
          fetch(`${server.baseUrl}/reports/new`, {
            method: 'POST',
            headers: { 'X-API-KEY': key, 'Content-Type': 'application/json' },
            body: JSON.stringify(reportInput({ restId: unique('bouncer') })),
          }),
        ),
      );
      statuses.push(...answers.map((res) => res.status));
    }
    expect(statuses).to.include(500);
  });

  it('refuses statement_timeout as a startup parameter: the service says so at start-up instead of failing every request', async () => {
    const client = new pg.Client({ connectionString: bouncer!.url, statement_timeout: 15_000 });
    const error = await client.connect().then(
      () => undefined,
      (err: unknown) => err,
    );
    await client.end().catch(() => undefined);
    expect(String(error)).to.match(/unsupported startup parameter: statement_timeout/);

    // The default DATABASE_STATEMENT_TIMEOUT_MS through PgBouncer: start-up stops, naming the variable.
    const { code, stderr } = await runToExit({ DATABASE_URL: bouncer!.url, DATABASE_MIGRATION_URL: databaseUrl() });
    expect(code).to.equal(1);
    expect(stderr).to.match(
      /^Configuration error: DATABASE_STATEMENT_TIMEOUT_MS: the server at DATABASE_URL \(PgBouncer\) refuses statement_timeout as a startup parameter; set DATABASE_STATEMENT_TIMEOUT_MS=0/,
    );
  });
});
