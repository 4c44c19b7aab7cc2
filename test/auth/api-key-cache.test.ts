import { expect } from 'chai';
import type { Express } from 'express';
import type { Pool } from '../../src/db/pool.js';
import { ApiKeyCache } from '../../src/auth/api-key-cache.js';
import { api, countingPool, databaseUrl, newApp, newCompany, pool } from '../support/harness.js';

interface CachingServer {
  app: Express;
  pool: Pool;
  cache: ApiKeyCache;
  queries: () => number;
  close: () => Promise<void>;
}

/** A second server process (its own app and pool) whose key cache counts the key queries it sends. */
async function cachingServer(): Promise<CachingServer> {
  const { db, queries } = countingPool();
  const cache = new ApiKeyCache({ db, connectionString: databaseUrl() });
  expect(await cache.ready(), 'the key cache listens').to.equal(true);
  const server = newApp({ apiKeys: cache });
  const close = async () => {
    await cache.close();
    await server.pool.end();
  };
  return { ...server, cache, queries, close };
}

/**
 * Uses the key until the cache holds it. A key's first use writes lastUsedAt, and that change of the
 * key row is notified and drops the entry, so the key is read once more before it stays cached.
 */
async function useUntilCached(server: CachingServer, key: string): Promise<void> {
  for (let i = 0; i < 5; i++) {
    const before = server.queries();
    await api(server.app).get('/auth').set('X-API-KEY', key).expect(200);
    if (server.queries() === before) return;
  }
  throw new Error('the key was never served from the cache');
}

describe('API key cache (revocation through LISTEN/NOTIFY)', () => {
  const servers: CachingServer[] = [];
  after(() => Promise.all(servers.map((s) => s.close())));

  it('answers repeated requests from the cache, without a key query each', async () => {
    const server = await cachingServer();
    servers.push(server);
    const { key } = await newCompany();
    await api(server.app).get('/auth').set('X-API-KEY', key).expect(200);
    expect(server.queries()).to.equal(1);
    await useUntilCached(server, key);
    const cachedQueries = server.queries();
    expect(cachedQueries).to.be.at.most(3);
    for (let i = 0; i < 5; i++) await api(server.app).get('/auth').set('X-API-KEY', key).expect(200);
    expect(server.queries()).to.equal(cachedQueries);
  });

  it('refuses a key deleted in the database on the very next request of another app instance that had it cached', async () => {
    const server = await cachingServer();
    servers.push(server);
    // Several rounds, each revoking a cached key and asking again at once: none may slip through.
    for (let round = 0; round < 10; round++) {
      const { key, companyId } = await newCompany();
      await useUntilCached(server, key);
      const cachedQueries = server.queries();
      await api(server.app).get('/reports?limit=1').set('X-API-KEY', key).expect(200);
      expect(server.queries(), 'served from the cache').to.equal(cachedQueries);

      await pool().query('DELETE FROM api_keys WHERE company_id = $1', [companyId]);
      const res = await api(server.app).get('/auth').set('X-API-KEY', key).expect(400);
      expect(res.body).to.deep.equal({ error: 'invalid API key' });
    }
  });

  it('refuses a revoked key even when the listening connection was lost meanwhile, and caches again once it listens', async () => {
    const server = await cachingServer();
    servers.push(server);
    const { key, companyId } = await newCompany();
    await useUntilCached(server, key);

    await pool().query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'inspection-report-intake change feed'`,
    );
    await pool().query('DELETE FROM api_keys WHERE company_id = $1', [companyId]);
    await api(server.app).get('/auth').set('X-API-KEY', key).expect(400, { error: 'invalid API key' });

    expect(await server.cache.ready(), 'listens again after reconnecting').to.equal(true);
    const other = await newCompany();
    await useUntilCached(server, other.key);
    const cachedQueries = server.queries();
    await api(server.app).get('/auth').set('X-API-KEY', other.key).expect(200);
    expect(server.queries()).to.equal(cachedQueries);
  });

  it('records last use on the first request, not again within the minute, and again once it was aged', async () => {
    const server = await cachingServer();
    servers.push(server);
    const { key, companyId } = await newCompany();
    const lastUsed = async () =>
      (
        await pool().query<{ t: Date | null }>('SELECT last_used_at AS t FROM api_keys WHERE company_id = $1', [
          companyId,
        ])
      ).rows[0]!.t;
    expect(await lastUsed()).to.equal(null);
    await api(server.app).get('/auth').set('X-API-KEY', key).expect(200);
    const first = await lastUsed();
    expect(first).to.be.instanceOf(Date);
    await useUntilCached(server, key);
    expect((await lastUsed())!.getTime()).to.equal(first!.getTime());
    // A cached key whose recorded use is made older than a minute is read, and recorded, again.
    await pool().query(
      `UPDATE api_keys SET last_used_at = last_used_at - interval '61 seconds' WHERE company_id = $1`,
      [companyId],
    );
    const aged = await lastUsed();
    await api(server.app).get('/auth').set('X-API-KEY', key).expect(200);
    expect((await lastUsed())!.getTime()).to.be.greaterThan(aged!.getTime());
  });
});
