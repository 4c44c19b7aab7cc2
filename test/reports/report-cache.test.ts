import { expect } from 'chai';
import type { Express } from 'express';
import type { Report } from '../../src/api-types.js';
import { databaseKeys } from '../../src/integrations/keys/api-key-cache.js';
import { ChangeFeed } from '../../src/db/change-feed.js';
import type { Pool } from '../../src/db/pool.js';
import { databaseReports, ReportCache } from '../../src/reports/cache.js';
import {
  api,
  countingPool,
  databaseUrl,
  feedBackend,
  killChangeFeed,
  newApp,
  newCompany,
  pool,
  reportInput,
  unique,
  type TestCompany,
} from '../support/harness.js';

interface CachingServer {
  app: Express;
  pool: Pool;
  feed: ChangeFeed;
  /** Report reads the cache sent to the database. */
  queries: () => number;
  close: () => Promise<void>;
}

/**
 * A second server process (its own app, pool and change feed) whose report cache counts its database
 * reads. Its keys are read from the database on every request, so no key-cache barrier runs before a
 * report read: the report cache's own barrier is the one that must make it fresh.
 */
async function cachingServer(
  maxBytes?: number,
  companyBytes?: number,
  minResidenceMs?: number,
): Promise<CachingServer> {
  const { db, queries } = countingPool();
  const feed = new ChangeFeed({ connectionString: databaseUrl() });
  expect(await feed.ready(), 'the change feed listens').to.equal(true);
  const server = newApp({
    apiKeys: databaseKeys(pool()),
    reports: new ReportCache({ db, feed, maxBytes, companyBytes, minResidenceMs }),
  });
  const close = async () => {
    await feed.close();
    await server.pool.end();
  };
  return { ...server, feed, queries, close };
}

describe('report cache (changes through LISTEN/NOTIFY)', () => {
  const servers: CachingServer[] = [];
  let company: TestCompany;

  const started = async (maxBytes?: number, companyBytes?: number, minResidenceMs?: number) => {
    const server = await cachingServer(maxBytes, companyBytes, minResidenceMs);
    servers.push(server);
    return server;
  };
  const create = async (overrides: Record<string, unknown> = {}, target?: Express) => {
    const res = await api(target)
      .post('/reports/new')
      .set('X-API-KEY', company.key)
      .send(reportInput({ restId: unique('cached'), ...overrides }))
      .expect(200);
    return (res.body as { id: string }).id;
  };
  const read = async (server: CachingServer, id: string) =>
    (await api(server.app).get(`/reports/${id}`).set('X-API-KEY', company.key).expect(200)).body as Report;
  const firstPage = async (server: CachingServer) =>
    (await api(server.app).get('/reports?limit=2').set('X-API-KEY', company.key).expect(200)).body as Report[];

  before(async () => {
    company = await newCompany();
  });
  after(() => Promise.all(servers.map((s) => s.close())));

  it('answers repeated reads of a report and of a page from memory', async () => {
    const server = await started();
    const id = await create();
    const report = await read(server, id);
    await firstPage(server);
    const queries = server.queries();
    for (let i = 0; i < 5; i++) {
      expect(await read(server, id)).to.deep.equal(report);
      await firstPage(server);
    }
    expect(server.queries(), 'no report query after the first reads').to.equal(queries);
  });

  it('sends a cached report or page as the very bytes and headers an answer from the database has', async () => {
    const server = await started();
    await create({ notes: 'Gate code "4321" \u2014 <b>&</b>', clientNames: ['Zoë Ñandú', 'Jordan Smith'] });
    const id = await create({ invoiceItems: ['Radon test: $150'] });
    const uncached = newApp({ apiKeys: databaseKeys(pool()), reports: databaseReports(pool()) });
    try {
      for (const path of [`/reports/${id}`, '/reports?limit=2']) {
        const fromDatabase = await api(uncached.app).get(path).set('X-API-KEY', company.key).expect(200);
        const queries = server.queries();
        const [miss, hit] = [
          await api(server.app).get(path).set('X-API-KEY', company.key).expect(200),
          await api(server.app).get(path).set('X-API-KEY', company.key).expect(200),
        ];
        expect(server.queries(), `${path}: the second answer from memory`).to.equal(queries + 1);
        for (const res of [miss, hit]) {
          expect(res.text, path).to.equal(fromDatabase.text);
          for (const header of ['content-type', 'content-length']) {
            expect(res.headers[header], `${path} ${header}`).to.equal(fromDatabase.headers[header]);
          }
        }
        const head = await api(server.app).head(path).set('X-API-KEY', company.key).expect(200);
        expect(head.headers['content-length'], `HEAD ${path}`).to.equal(fromDatabase.headers['content-length']);
      }
    } finally {
      await uncached.pool.end();
    }
  });

  it('shows on the very next read what another process, or SQL, wrote a moment before', async () => {
    const server = await started();
    // Rounds of: cache a report and the first page, write elsewhere, read at once. None may be stale.
    for (let round = 0; round < 10; round++) {
      const restId = unique('round');
      const id = await create({ restId, inspectionDate: '2099-01-01', notes: 'before' });
      await read(server, id);
      expect((await firstPage(server))[0]!.id).to.equal(id);

      await create({ restId, inspectionDate: '2099-01-01', notes: `update ${round}` }); // the shared app
      expect((await read(server, id)).inspectorNotes).to.equal(`update ${round}`);
      expect((await firstPage(server))[0]!.inspectorNotes).to.equal(`update ${round}`);

      const newer = await create({ inspectionDate: '2099-01-02' });
      expect((await firstPage(server))[0]!.id, 'a new report heads the cached page').to.equal(newer);

      await pool().query(`UPDATE reports SET notes = 'by SQL' WHERE id = $1`, [id]);
      expect((await read(server, id)).inspectorNotes).to.equal('by SQL');
      await pool().query('DELETE FROM reports WHERE id = $1', [newer]);
      expect((await firstPage(server))[0]!.id, 'a deleted report leaves the cached page').to.equal(id);
    }
  });

  it('never serves a change whose notification has not arrived: it waits for its barrier, or asks the database', async () => {
    const server = await started();
    const restId = unique('stalled');
    const id = await create({ restId, notes: 'before' });
    await read(server, id);
    await read(server, id); // from the cache, through a barrier that came back: older barriers prove nothing now
    // The backend of the feed's LISTEN connection stopped: the change below is committed and notified,
    // but its notification (and the answer to any barrier) cannot reach this process.
    const backend = feedBackend(server.feed);
    process.kill(backend, 'SIGSTOP');
    try {
      await create({ restId, notes: 'while deliveries stalled' });
      expect((await read(server, id)).inspectorNotes).to.equal('while deliveries stalled');
    } finally {
      process.kill(backend, 'SIGCONT');
    }
  });

  it("never answers one company's cached report to another", async () => {
    const server = await started();
    const id = await create();
    await read(server, id);
    const other = await newCompany();
    await api(server.app).get(`/reports/${id}`).set('X-API-KEY', other.key).expect(404);
    const page = await api(server.app).get('/reports?limit=2').set('X-API-KEY', other.key).expect(200);
    expect(page.body).to.deep.equal([]);
  });

  it('reads from the database while its feed is down, and caches again once it listens', async () => {
    const server = await started();
    const restId = unique('lost');
    const id = await create({ restId, notes: 'before' });
    await read(server, id);
    await killChangeFeed(server.feed);
    await create({ restId, notes: 'while the feed was down' });
    expect((await read(server, id)).inspectorNotes).to.equal('while the feed was down');

    expect(await server.feed.ready(), 'listens again after reconnecting').to.equal(true);
    await read(server, id);
    const queries = server.queries();
    await read(server, id);
    expect(server.queries(), 'cached again').to.equal(queries);
  });

  it('holds no more than its byte budget: the oldest entries go first', async () => {
    // Room for one or two reports (under 1 KB of JSON each), not five; all of it for the one company,
    // whose entries make room for its new ones however recently they were kept.
    const server = await started(1_500, 1_500, 0);
    const ids = [await create(), await create(), await create(), await create(), await create()];
    for (const id of ids) await read(server, id);
    const queries = server.queries();
    await read(server, ids.at(-1)!);
    expect(server.queries(), 'the newest is still cached').to.equal(queries);
    await read(server, ids[0]!);
    expect(server.queries(), 'the oldest was evicted').to.equal(queries + 1);
  });

  it('keeps what a company kept first when it reads past its share within a second: the newer reads are not kept', async () => {
    // As above, with the service's rule (an entry kept less than MIN_RESIDENCE_MS ago is not dropped for
    // another of its company), its second made a minute so that no slow machine reads past it.
    const server = await started(1_500, 1_500, 60_000);
    const ids = [await create(), await create(), await create(), await create()];
    for (const id of ids) await read(server, id);
    const queries = server.queries();
    await read(server, ids[0]!);
    expect(server.queries(), 'the first read is still cached').to.equal(queries);
    await read(server, ids.at(-1)!);
    expect(server.queries(), 'the last read was answered, not kept').to.equal(queries + 1);
  });

  it('shows a change at once to a report read by its id in upper case (ids are case-insensitive)', async () => {
    const server = await started();
    const restId = unique('upper');
    const id = await create({ restId, notes: 'before' });
    const upper = id.toUpperCase();
    const readUpper = async () =>
      ((await api(server.app).get(`/reports/${upper}`).set('X-API-KEY', company.key).expect(200)).body as Report)
        .inspectorNotes;
    expect(await readUpper()).to.equal('before');
    await create({ restId, notes: 'after' });
    expect(await readUpper(), 'the update through another process').to.equal('after');
  });

  it("keeps a company's entries when another company fills its share with large pages", async () => {
    // Room for about eight reports; each company may hold about four of them.
    const server = await started(8_000, 4_000);
    // A key cached less than a minute ago, whatever this suite took so far: its entry must not run out
    // (and be read again) between the reads counted below.
    company = await newCompany();
    const small = [await create(), await create()];
    for (const id of small) await read(server, id);
    const flooder = await newCompany();
    for (let i = 0; i < 12; i++) {
      const res = await api(server.app)
        .post('/reports/new')
        .set('X-API-KEY', flooder.key)
        .send(reportInput({ notes: 'n'.repeat(300) }))
        .expect(200);
      await api(server.app)
        .get(`/reports/${(res.body as { id: string }).id}`)
        .set('X-API-KEY', flooder.key)
        .expect(200);
    }
    const queries = server.queries();
    for (const id of small) await read(server, id);
    expect(server.queries(), "the first company's reports are still cached").to.equal(queries);
  });
});
