import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import pg from 'pg';
import { MovingAddress, startReplicatedPair, type ReplicatedPair } from '../support/failover.js';
import { Workload, type Answer, type Company } from '../support/failover-load.js';
import { APP_TOKEN, unique } from '../support/harness.js';
import { HttpsReceiver } from '../support/https-receiver.js';
import { hasPgBouncer, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { startServer, type RunningServer } from '../support/server-process.js';
import { hasStockPostgres } from '../support/stock-postgres.js';

// Issue 40's failover: a primary and a synchronous standby of Debian's PostgreSQL, the service's two
// processes connected through one address that moves. Under steady traffic of every kind the primary is
// killed (kill -9 of the postmaster), the address moved to the standby (read-only until it is promoted)
// and the standby promoted; then every answer
// must have been declared, every acknowledged write must be on the new primary, both processes must
// serve again within 5 s, caches must not serve what changed, and no event may be lost or listed twice.

const bearer = { Authorization: `Bearer ${APP_TOKEN}` };
const INSPECTOR = { name: 'Dana Inspector', email: 'dana@example.com' };
/** The service's wait on the database (its default): a request is answered within it and a margin. */
const WAIT_MS = 5_000;
const MARGIN_MS = 2_000;
/** A publish waits on the database twice (its claim, its outcome) and on the receiver (its timeout) between. */
const WEBHOOK_TIMEOUT_MS = 10_000;
const READS = ['read', 'feed'];
const budget = (label: string) => (label === 'publish' ? 2 * WAIT_MS + WEBHOOK_TIMEOUT_MS : WAIT_MS) + MARGIN_MS;
/** How long no server answers: the old primary is dead, the address not yet moved. */
const NO_PRIMARY_MS = 2_000;
/** How long the address reaches the standby before it is promoted: it answers, read-only. */
const READ_ONLY_MS = 3_000;

interface Setup {
  pair: ReplicatedPair;
  address: MovingAddress;
  receiver: HttpsReceiver;
  bouncer?: PgBouncer;
  servers: RunningServer[];
  caDir: string;
}

describe('a failover to a synchronous standby behind a moving address', function () {
  this.timeout(240_000);
  let setup: Partial<Setup> = {};

  before(() => {
    if (!hasStockPostgres()) throw new Error("Debian's PostgreSQL is not installed (apt-get install -y postgresql-15)");
    if (!hasPgBouncer()) throw new Error('pgbouncer is not installed (apt-get install -y pgbouncer)');
  });

  afterEach(async () => {
    for (const server of setup.servers ?? []) server.kill();
    await setup.bouncer?.stop();
    await setup.receiver?.stop();
    await setup.address?.stop();
    await setup.pair?.remove();
    if (setup.caDir) await rm(setup.caDir, { recursive: true, force: true });
    setup = {};
  });

  for (const behindBouncer of [false, true]) {
    it(`loses nothing acknowledged and serves again without a restart${behindBouncer ? ', behind PgBouncer in transaction mode' : ''}`, async () => {
      setup.pair = await startReplicatedPair();
      setup.address = await MovingAddress.start(setup.pair.primary.port);
      setup.receiver = await HttpsReceiver.start();
      setup.caDir = await mkdtemp(path.join(tmpdir(), 'intake-ca-'));
      await writeFile(path.join(setup.caDir, 'ca.pem'), setup.receiver.ca);
      let databaseEnv: Record<string, string> = { DATABASE_URL: setup.address.url() };
      if (behindBouncer) {
        // Behind PgBouncer the statement timeout is the role's (it refuses it as a startup parameter).
        await onServer(setup.address.url(), `ALTER ROLE postgres SET statement_timeout = '${WAIT_MS * 0.8}ms'`);
        // PgBouncer waits server_login_retry (15 s by default) after a failed connection: a failover needs less.
        setup.bouncer = await startPgBouncer(setup.address.url(), { server_login_retry: '1' });
        databaseEnv = {
          DATABASE_URL: setup.bouncer.url,
          DATABASE_MIGRATION_URL: setup.address.url(),
          DATABASE_STATEMENT_TIMEOUT_MS: '0',
          DATABASE_PREPARED_STATEMENTS: 'false',
        };
      }
      const env = {
        ...databaseEnv,
        DATABASE_CONNECT_TIMEOUT_MS: String(WAIT_MS),
        WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
        // One key sends all the load and then retries every keyed create: more than a key's budget a minute.
        RATE_LIMIT_PER_MINUTE: '0',
        WEBHOOK_WORKER: 'true',
        WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
        NODE_EXTRA_CA_CERTS: path.join(setup.caDir, 'ca.pem'),
        WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s,1s,1s,1s,1s',
        WEBHOOK_RETRY_POLL_MS: '200',
      };
      setup.servers = [await startServer(undefined, env), await startServer(undefined, env)];
      await failover(setup as Setup, behindBouncer ? 'behind PgBouncer' : 'direct');
    });
  }
});

async function onServer(url: string, sql: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await client.query(sql, values);
  } finally {
    await client.end();
  }
}

async function newCompany(base: string, receiver: HttpsReceiver): Promise<Company & { hook: string }> {
  const call = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { ...bearer, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, string>;
  };
  const { id: companyId } = await call('POST', '/internal/companies', { name: unique('failover') });
  await call('POST', `/internal/companies/${companyId}/users`, INSPECTOR);
  const { key } = await call('POST', `/internal/companies/${companyId}/api-keys`);
  const hook = `/${unique('hook')}`;
  await call('PUT', `/internal/companies/${companyId}/webhook`, { url: receiver.url(hook) });
  return { companyId: companyId!, key: key!, inspector: INSPECTOR.email, hook };
}

/** Waits (bounded) until every process has answered a write with a 2xx that it received after `since`. */
async function servedAgain(load: Workload, processes: number, since: number): Promise<number[]> {
  const firstOk = (server: number) =>
    load.answers.find((a) => a.server === server && a.at >= since && a.label === 'create' && a.status === 200);
  for (let waited = 0; waited < 30_000; waited += 100) {
    const found = Array.from({ length: processes }, (_, i) => firstOk(i));
    if (found.every(Boolean)) return found.map((a) => a!.at + a!.ms - since);
    await sleep(100);
  }
  throw new Error('a process did not serve a write again within 30 s of the switch');
}

async function failover({ pair, address, receiver, servers }: Setup, label: string): Promise<void> {
  const bases = servers.map((s) => s.baseUrl);
  const company = await newCompany(bases[0]!, receiver);
  const load = new Workload(bases, company);
  // Each second the receiver fails one attempt (503: the event retries in the background) and answers
  // the others slowly, so that attempts are in flight, and events leased, when the primary dies.
  const slowly = { status: 204, waitFor: () => sleep(700) };
  const receiving = setInterval(() => receiver.on(company.hook, { status: 503 }, slowly), 1_000);
  load.start();
  let killedAt: number, readOnlyAt: number, promotedIn: number, switchedAt: number, recovered: number[];
  try {
    await sleep(3_000);
    killedAt = Date.now();
    await pair.primary.kill();
    await sleep(NO_PRIMARY_MS);
    address.switchTo(pair.standby.port);
    readOnlyAt = Date.now();
    await sleep(READ_ONLY_MS);
    const promoting = Date.now();
    await pair.promote();
    switchedAt = Date.now();
    promotedIn = switchedAt - promoting;
    recovered = await servedAgain(load, servers.length, switchedAt);
    await sleep(5_000);
  } finally {
    // Also when a step fails: the load's loops and the interval would keep mocha from ever exiting.
    clearInterval(receiving);
    await load.stop();
  }
  receiver.on(company.hook, { status: 204 });

  const during = load.answers.filter((a) => a.at >= killedAt && a.at < switchedAt + Math.max(...recovered));
  const byStatus = (answers: Answer[]) =>
    answers.reduce<Record<string, number>>((n, a) => ({ ...n, [a.status]: (n[a.status] ?? 0) + 1 }), {});
  const slowest = load.answers.reduce((a, b) => (b.ms > a.ms ? b : a));
  const longest = slowest.ms;
  const found = await acknowledgedWritesFound(load, pair.standby.url, company.companyId);
  const events = await eventsDelivered(load, receiver, company, pair.standby.url);
  console.log(
    `      ${label}: ${load.answers.length} requests; during the switch ${JSON.stringify(byStatus(during))}; ` +
      `longest answer ${longest} ms (${slowest.label}, ${slowest.status}); promoted in ${promotedIn} ms, served again ${recovered.join(' and ')} ms after; ` +
      `writes acknowledged ${found.acknowledged}, found ${found.found}; events ${events.published}, ` +
      `delivered ${events.delivered} (${events.again} more than once), listed once ${events.listed}, ` +
      `lost ${events.published - events.delivered}`,
  );

  expect(load.answers.filter((a) => a.problem).map((a) => `${a.label} ${a.status}: ${a.problem}`)).to.deep.equal([]);
  expect(
    load.answers.filter((a) => a.status !== 503 && (a.status < 200 || a.status > 299)).map((a) => a),
  ).to.deep.equal([]);
  expect(load.answers.filter((a) => a.ms > budget(a.label))).to.deep.equal([]);
  // While the address reaches the standby, reads are served and writes refused as read-only.
  const readOnly = load.answers.filter((a) => a.at >= readOnlyAt + 1_000 && a.at + a.ms < switchedAt);
  expect(readOnly.filter((a) => READS.includes(a.label) && a.status !== 200)).to.deep.equal([]);
  expect(readOnly.filter((a) => READS.includes(a.label))).not.to.deep.equal([]);
  expect(readOnly.filter((a) => !READS.includes(a.label)).map((a) => a.body)).to.deep.include({
    error: 'database is read-only',
  });
  expect(Math.max(...recovered)).to.be.at.most(5_000);
  expect(found.missing, 'acknowledged writes the new primary lacks').to.deep.equal([]);
  expect(events.delivered).to.equal(events.published);
  await noStaleReads(load, company);
}

/** Every write acknowledged with a 2xx, looked for on the new primary; a keyed create retried. */
async function acknowledgedWritesFound(
  load: Workload,
  url: string,
  companyId: string,
): Promise<{ acknowledged: number; found: number; missing: string[] }> {
  const { acked } = load;
  const db = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await db.connect();
  try {
    const reports = new Map(
      (
        await db.query<{ id: string; rest_id: string | null; notes: string; status: string }>(
          'SELECT id, rest_id, notes, status FROM reports WHERE company_id = $1',
          [companyId],
        )
      ).rows.map((r) => [r.id, r]),
    );
    const keyRows = await db.query<{ id: string }>('SELECT id FROM api_keys WHERE company_id = $1', [companyId]);
    const keys = new Set(keyRows.rows.map((r) => r.id));
    const events = await db.query<{ id: string }>('SELECT id FROM webhook_events WHERE company_id = $1', [companyId]);
    const eventIds = new Set(events.rows.map((r) => r.id));
    // Each acknowledged write, named, with whether the new primary has it.
    const checks: [string, boolean][] = [
      ...[...acked.creates].map(([restId, id]): [string, boolean] => [
        `create ${id}`,
        reports.get(id)?.rest_id === restId,
      ]),
      ...[...acked.keyed.values()].map(({ id }): [string, boolean] => [`keyed create ${id}`, reports.has(id)]),
      ...[...acked.updates].map(([id, { sent, acked: last }]): [string, boolean] => [
        `update ${id} to "${sent[last]}"`,
        sent.indexOf(reports.get(id)?.notes ?? '') >= last,
      ]),
      ...[...acked.published].map(([id, event]): [string, boolean] => [
        `publish ${id} (event ${event})`,
        reports.get(id)?.status === 'published' && eventIds.has(event),
      ]),
      // A key whose revocation was answered 503 may be gone: that revocation may have committed.
      ...[...acked.keys.keys()]
        .filter((id) => !acked.revoked.has(id) && !acked.revocationUnsure.has(id))
        .map((id): [string, boolean] => [`key generated ${id}`, keys.has(id)]),
      ...[...acked.revoked].map((id): [string, boolean] => [`key revoked ${id}`, !keys.has(id)]),
    ];
    // A retried keyed create answers what it answered, and makes no second report.
    for (const [key, { body, id }] of acked.keyed) {
      const res = await load.send('retry keyed', 'POST', '/reports/new', {
        headers: { 'X-API-KEY': load.company.key, 'Idempotency-Key': key },
        body,
      });
      const copies = [...reports.values()].filter((r) => r.notes === body.notes).length;
      checks.push([
        `keyed create ${id} retried: ${res.status}, ${copies} cop${copies === 1 ? 'y' : 'ies'}`,
        res.status === 200 && (res.body as { id: string }).id === id && copies === 1,
      ]);
    }
    return {
      acknowledged: checks.length,
      found: checks.filter(([, ok]) => ok).length,
      missing: checks.filter(([, ok]) => !ok).map(([write]) => write),
    };
  } finally {
    await db.end();
  }
}

/** Waits (bounded) until every published event reached the receiver and the feed lists each once. */
async function eventsDelivered(
  load: Workload,
  receiver: HttpsReceiver,
  company: Company & { hook: string },
  url: string,
): Promise<{ published: number; delivered: number; listed: number; again: number }> {
  // The events acknowledged, and those of publishes answered 503 that committed all the same; not those
  // still `sending`: a publish whose outcome was never recorded published nothing, and its retry takes them over.
  const recorded = await onServer(url, "SELECT id FROM webhook_events WHERE company_id = $1 AND status <> 'sending'", [
    company.companyId,
  ]);
  const wanted = new Set([...load.acked.published.values(), ...recorded.rows.map((r: { id: string }) => r.id)]);
  const received = () => new Set(receiver.at(company.hook).map((r) => String(r.headers['webhook-id'])));
  for (let waited = 0; waited < 60_000; waited += 250) {
    await load.pollFeed();
    const listed = new Set(load.feed);
    if ([...wanted].every((id) => received().has(id) && listed.has(id))) break;
    await sleep(250);
  }
  expect(load.feed.length, 'an event listed twice by the feed').to.equal(new Set(load.feed).size);
  expect([...new Set(load.feed)].sort(), 'the feed lists every event recorded').to.deep.equal([...wanted].sort());
  expect(receiver.contractErrors).to.deep.equal([]);
  const delivered = [...wanted].filter((id) => received().has(id)).length;
  const attempts = receiver.at(company.hook).map((r) => String(r.headers['webhook-id']));
  return {
    published: wanted.size,
    delivered,
    listed: [...wanted].filter((id) => load.feed.includes(id)).length,
    // Events whose webhook-id came more than once: retried after a failed attempt, or attempted again
    // after a lease taken on the old primary ran out.
    again: new Set(attempts.filter((id, i) => attempts.indexOf(id) !== i)).size,
  };
}

/** After the switch: a key revoked is refused at once by every process; a report updated reads back updated. */
async function noStaleReads(load: Workload, company: Company): Promise<void> {
  const path = `/internal/companies/${company.companyId}/api-keys`;
  const made = await load.send('key generated', 'POST', path, { headers: bearer, server: 0 });
  const { id, key } = made.body as { id: string; key: string };
  for (const server of [0, 1]) {
    expect((await load.send('read', 'GET', '/auth', { headers: { 'X-API-KEY': key }, server })).status).to.equal(200);
  }
  expect((await load.send('key revoked', 'DELETE', `${path}/${id}`, { headers: bearer, server: 1 })).status).to.equal(
    204,
  );
  for (const server of [0, 1]) {
    expect((await load.send('read', 'GET', '/auth', { headers: { 'X-API-KEY': key }, server })).status).to.equal(400);
  }
  const [restId, reportId] = [...load.acked.creates].at(-1)!;
  const partner = { 'X-API-KEY': company.key };
  for (const server of [0, 1]) await load.send('read', 'GET', `/reports/${reportId}`, { headers: partner, server });
  const notes = unique('after the switch');
  const update = await load.send('update', 'POST', '/reports/new', {
    headers: partner,
    body: { clientNames: 'Jordan Smith', inspectionDate: '2026-03-14', restId, notes },
    server: 0,
  });
  expect(update.status).to.equal(200);
  for (const server of [0, 1]) {
    const read = await load.send('read', 'GET', `/reports/${reportId}`, { headers: partner, server });
    expect((read.body as { inspectorNotes: string }).inspectorNotes).to.equal(notes);
  }
}
