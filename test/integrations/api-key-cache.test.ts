import { expect } from 'chai';
import { hashKey, newKey } from '../../src/integrations/keys/api-keys.js';
import { APP_TOKEN, api, killChangeFeed, newCompany, pool } from '../support/harness.js';
import { cachingServer, useUntilCached, type CachingServer } from '../support/caching-server.js';
import { until } from '../support/wait.js';

/** Sends the key until the cache holds it as unknown (its second refusal costs no key query). */
async function refuseUntilCached(server: CachingServer, key: string): Promise<void> {
  for (let i = 0; i < 5; i++) {
    const before = server.queries();
    await api(server.app).get('/auth').set('X-API-KEY', key).expect(400, { error: 'invalid API key' });
    if (server.queries() === before) return;
  }
  throw new Error('the unknown key was never answered from the cache');
}

/**
 * Stores `key` for the company as another process's key creation would (createKey draws its own
 * random key; a test needs one it has already sent). The company's integration is the one of its key.
 */
async function insertKey(companyId: string, key: string): Promise<void> {
  const { rowCount } = await pool().query(
    `INSERT INTO api_keys (company_id, integration_id, key_hash, prefix)
     SELECT company_id, integration_id, $2, $3 FROM api_keys WHERE company_id = $1 LIMIT 1`,
    [companyId, hashKey(key), key.slice(0, 12)],
  );
  expect(rowCount).to.equal(1);
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

    await killChangeFeed(server.cache.feed);
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

  describe('unknown and revoked keys', () => {
    it('refuses a repeated unknown key with one key query, not one per request', async () => {
      const server = await cachingServer();
      servers.push(server);
      const { key } = newKey();
      for (let i = 0; i < 20; i++) {
        await api(server.app).get('/auth').set('X-API-KEY', key).expect(400, { error: 'invalid API key' });
      }
      expect(server.queries()).to.equal(1);
      // Other partner routes are refused from the cache the same way.
      await api(server.app).get('/reports?limit=1').set('X-API-KEY', key).expect(400, { error: 'invalid API key' });
      expect(server.queries()).to.equal(1);
    });

    it('refuses a burst of requests with a key it has not read yet with one key query: they join the read in flight', async () => {
      const server = await cachingServer();
      servers.push(server);
      const { key } = newKey();
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => api(server.app).get('/auth').set('X-API-KEY', key)),
      );
      expect(answers.map((res) => res.status)).to.deep.equal(Array(20).fill(400));
      expect(server.queries()).to.equal(1);
    });

    it('keeps refusing a revoked key, from the cache once it has read the revocation', async () => {
      const server = await cachingServer();
      servers.push(server);
      const { key, companyId } = await newCompany();
      await useUntilCached(server, key);
      // Revoked through the other process (the shared app).
      await api()
        .delete(`/internal/companies/${companyId}/integration`)
        .set('Authorization', `Bearer ${APP_TOKEN}`)
        .expect(204);
      await api(server.app).get('/auth').set('X-API-KEY', key).expect(400, { error: 'invalid API key' });
      await refuseUntilCached(server, key);
      const cachedQueries = server.queries();
      for (let i = 0; i < 10; i++) {
        await api(server.app).get('/auth').set('X-API-KEY', key).expect(400, { error: 'invalid API key' });
      }
      expect(server.queries()).to.equal(cachedQueries);
    });

    it('accepts a key created on another process on the very next request of one that had it cached as unknown', async () => {
      const server = await cachingServer();
      servers.push(server);
      const { companyId } = await newCompany();
      // Several rounds, each creating a key cached as unknown and sending it at once: none may be refused.
      for (let round = 0; round < 10; round++) {
        const { key } = newKey();
        await refuseUntilCached(server, key);
        await insertKey(companyId, key);
        await api(server.app).get('/auth').set('X-API-KEY', key).expect(200);
      }
    });

    it('accepts a key created while the listening connection was lost, and caches unknown keys again once it listens', async () => {
      const server = await cachingServer();
      servers.push(server);
      const { companyId } = await newCompany();
      const [whileDown, afterwards] = [newKey().key, newKey().key];
      await refuseUntilCached(server, whileDown);
      await refuseUntilCached(server, afterwards);

      await killChangeFeed(server.cache.feed);
      await until(() => !server.cache.listening, 'aware that the feed is lost', 5_000);
      // Both creations are notified while nobody listens: the notifications are lost.
      await insertKey(companyId, whileDown);
      await insertKey(companyId, afterwards);
      await api(server.app).get('/auth').set('X-API-KEY', whileDown).expect(200);

      expect(await server.cache.ready(), 'listens again after reconnecting').to.equal(true);
      await api(server.app).get('/auth').set('X-API-KEY', afterwards).expect(200);
      const unknown = newKey().key;
      await refuseUntilCached(server, unknown);
    });

    it('caches no unknown key while its change feed does not listen', async () => {
      // A feed that can never connect (nothing listens on port 1): every refusal asks the database.
      const server = await cachingServer('postgres://127.0.0.1:1/none');
      servers.push(server);
      const { key } = newKey();
      for (let i = 0; i < 5; i++) {
        await api(server.app).get('/auth').set('X-API-KEY', key).expect(400, { error: 'invalid API key' });
      }
      expect(server.cache.listening).to.equal(false);
      expect(server.queries()).to.equal(5);
    });

    it('refuses a key that cannot be one this service issued without a key query', async () => {
      const server = await cachingServer();
      servers.push(server);
      const issued = newKey().key;
      const malformed = [
        'irk_not-a-key',
        'k'.repeat(5000),
        issued.slice(4), // without its prefix
        `${issued}A`, // one character too many
        `sk_${issued.slice(4)}`,
        `${issued.slice(0, -1)}B`, // a last character that 32 bytes cannot end in
        `${issued.slice(0, -1)}+`, // base64, not base64url
      ];
      for (const key of malformed) {
        await api(server.app).get('/auth').set('X-API-KEY', key).expect(400, { error: 'invalid API key' });
      }
      expect(server.queries()).to.equal(0);
      // The one that could be issued (but was not) is looked up.
      await api(server.app).get('/auth').set('X-API-KEY', issued).expect(400, { error: 'invalid API key' });
      expect(server.queries()).to.equal(1);
    });
  });
});
