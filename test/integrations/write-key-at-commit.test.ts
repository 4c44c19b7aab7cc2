import { expect } from 'chai';
import { createKey, hashKey } from '../../src/integrations/keys/api-keys.js';
import { api, feedBackend, newCompany, pool, reportInput, unique } from '../support/harness.js';
import { cachingServer, useUntilCached, type CachingServer } from '../support/caching-server.js';

/**
 * POST /reports/new takes a key this process holds as valid without waiting for the change feed's
 * barrier: its statement decides the key, finding it at commit or writing nothing. Each test stops the backend of the
 * server's LISTEN connection (SIGSTOP), so no barrier comes back and no revocation is heard: a request
 * that waited for one would see it fail after the feed's timeout, the feed dropped and its key read
 * from the database (a key query the server counts).
 */
describe('POST /reports/new with a key held as valid, while the change feed hears nothing', () => {
  const servers: CachingServer[] = [];
  after(() => Promise.all(servers.map((s) => s.close())));

  async function stalled(): Promise<{ server: CachingServer; key: string; companyId: string; resume: () => void }> {
    const server = await cachingServer();
    servers.push(server);
    const { key, companyId } = await newCompany();
    await useUntilCached(server, key);
    const backend = feedBackend(server.cache.feed);
    process.kill(backend, 'SIGSTOP');
    let resumed = false;
    const resume = () => {
      if (!resumed) process.kill(backend, 'SIGCONT');
      resumed = true;
    };
    return { server, key, companyId, resume };
  }

  const post = (server: CachingServer, key: string, body: object, idempotencyKey?: string) => {
    const req = api(server.app).post('/reports/new').set('X-API-KEY', key);
    return (idempotencyKey === undefined ? req : req.set('Idempotency-Key', idempotencyKey)).send(body);
  };

  const written = async (marker: string) =>
    (await pool().query('SELECT 1 FROM reports WHERE $1 = ANY (client_names)', [marker])).rows.length;

  it('writes without waiting for a barrier: no key query, and the feed still listens', async () => {
    const { server, key, resume } = await stalled();
    try {
      const marker = unique('unwaited');
      const queries = server.queries();
      await post(server, key, reportInput({ clientNames: marker })).expect(200);
      expect(server.queries(), 'the key was taken from the cache').to.equal(queries);
      expect(server.cache.listening, 'no barrier timed out').to.equal(true);
      expect(await written(marker)).to.equal(1);
    } finally {
      resume();
    }
  });

  it('refuses a key revoked but not yet heard: "invalid API key", nothing written, no kept answer given', async () => {
    const { server, key, companyId, resume } = await stalled();
    try {
      const idempotencyKey = unique('idem');
      const first = await post(server, key, reportInput(), idempotencyKey).expect(200);
      expect(first.body.id).to.be.a('string');
      await pool().query('DELETE FROM api_keys WHERE company_id = $1', [companyId]);

      const marker = unique('revoked');
      const refused = await post(server, key, reportInput({ clientNames: marker })).expect(400);
      expect(refused.body).to.deep.equal({ error: 'invalid API key' });
      expect(await written(marker)).to.equal(0);
      // The first request's answer is not given to a key revoked since.
      const again = await post(server, key, reportInput(), idempotencyKey).expect(400);
      expect(again.body).to.deep.equal({ error: 'invalid API key' });
    } finally {
      resume();
    }
  });

  it("answers a refusal before the statement (the body's shape) at once, with no key query", async () => {
    const { server, key, resume } = await stalled();
    try {
      const queries = server.queries();
      const res = await post(server, key, { clientNames: 'No Date' }).expect(400);
      expect(res.body.error).to.match(/inspectionDate/);
      expect(server.queries(), 'the key was taken from the cache').to.equal(queries);
      expect(server.cache.listening, 'no barrier timed out').to.equal(true);
    } finally {
      resume();
    }
  });

  it('keeps no refusal of a revoked key for its Idempotency-Key: a retry with a valid key is written', async () => {
    const { server, key, companyId, resume } = await stalled();
    try {
      const { key: other } = await createKey(pool(), companyId);
      await pool().query('DELETE FROM api_keys WHERE key_hash = $1', [hashKey(key)]);
      const idempotencyKey = unique('idem');
      const marker = unique('retried');
      const refused = await post(server, key, reportInput({ clientNames: marker }), idempotencyKey).expect(400);
      expect(refused.body).to.deep.equal({ error: 'invalid API key' });
      resume();
      const retried = await post(server, other, reportInput({ clientNames: marker }), idempotencyKey).expect(200);
      expect(retried.body.id).to.be.a('string');
      expect(await written(marker)).to.equal(1);
    } finally {
      resume();
    }
  });
});
