import net from 'node:net';
import { expect } from 'chai';
import { createApp } from '../../src/app.js';
import { createPool } from '../../src/db/pool.js';
import { api, appDeps } from '../support/harness.js';

describe('health probes', () => {
  it('GET /healthz answers 200 without a key', async () => {
    const res = await api().get('/healthz').expect(200);
    expect(res.body).to.deep.equal({ status: 'ok' });
  });

  it('GET /readyz answers 200 on a reachable, migrated database', async () => {
    const res = await api().get('/readyz').expect(200);
    expect(res.body).to.deep.equal({ status: 'ready' });
  });

  it('answers 405 for other methods and 400 for query parameters', async () => {
    await api().post('/healthz').expect(405).expect('Allow', 'GET, HEAD');
    await api().delete('/readyz').expect(405);
    const res = await api().get('/readyz?verbose=1').expect(400);
    expect(res.body).to.deep.equal({ error: 'unknown query parameter: verbose' });
  });

  it('is alive but not ready while the database cannot be reached', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = server.address() as net.AddressInfo;
        server.close(() => resolve(p));
      });
    });
    const db = createPool({ connectionString: `postgres://postgres:postgres@127.0.0.1:${port}/postgres` });
    try {
      const target = createApp(appDeps(db));
      await api(target).get('/healthz').expect(200);
      const res = await api(target).get('/readyz').expect(503);
      expect(res.body).to.deep.equal({ error: 'database unavailable' });
    } finally {
      await db.end();
    }
  });
});
