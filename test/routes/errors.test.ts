import { expect } from 'chai';
import { createApp } from '../../src/app.js';
import type { Pool } from '../../src/db/pool.js';
import { newKey } from '../../src/store/api-keys.js';
import { api, appDeps, newCompany } from '../support/harness.js';

/** An app whose database fails every query with the given error. */
function appWithFailingDatabase(error: Error & { code?: string }) {
  const db = {
    query: async () => {
      throw error;
    },
    connect: async () => {
      throw error;
    },
  } as unknown as Pool;
  return createApp(appDeps(db));
}

/** A key of the issued shape, so that its check reaches the (failing) database. */
const unknownKey = newKey().key;

describe('errors', () => {
  it('answers 500 {"error": "internal server error"} without stack, SQL or details of the failure', async () => {
    const failure = new Error('relation "api_keys" does not exist: SELECT key_hash FROM api_keys');
    const res = await api(appWithFailingDatabase(failure)).get('/auth').set('X-API-KEY', unknownKey).expect(500);
    expect(res.body).to.deep.equal({ error: 'internal server error' });
    expect(res.text).to.not.match(/api_keys|SELECT|at /);
  });

  it('answers 503 {"error": "database unavailable"} when the database cannot be reached', async () => {
    const failure = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const res = await api(appWithFailingDatabase(failure)).get('/auth').set('X-API-KEY', unknownKey).expect(503);
    expect(res.body).to.deep.equal({ error: 'database unavailable' });
  });

  it('answers 405 with Allow for a method a partner path lacks', async () => {
    const { key } = await newCompany();
    for (const [method, path, allow] of [
      ['delete', '/reports', 'GET, HEAD'],
      ['put', '/reports/new', 'POST'],
    ] as const) {
      const res = await api()[method](path).set('X-API-KEY', key).expect(405);
      expect(res.headers.allow).to.equal(allow);
      expect(res.body).to.deep.equal({ error: `method ${method.toUpperCase()} is not allowed on ${path}` });
    }
  });
});
