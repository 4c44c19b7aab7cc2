import { expect } from 'chai';
import type pg from 'pg';
import { createKey } from '../../src/integrations/index.js';
import { api, newApp, newCompany, newTestKey, pool } from '../support/harness.js';
import { auth } from '../support/webhooks.js';

/**
 * "Revoke REST API Integration" records each key it deletes as revoked with it, live then test, after
 * the integration's own entry: in one statement, so that as many statements revoke thirty keys as one.
 */

interface Entry {
  action: string;
  subject: string;
  details: Record<string, string>;
}

/**
 * Counts the statements writing the audit trail that every client of the pool sends while the action runs
 * (the pool's other work, a background sync, may come at any moment and is not the revocation's).
 */
function statementCounter(own: pg.Pool) {
  let count: number | undefined;
  own.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
      if (count !== undefined && text?.includes('INSERT INTO audit_events')) count++;
      return query(...args);
    }) as typeof client.query;
  });
  return async (action: () => Promise<unknown>): Promise<number> => {
    count = 0;
    try {
      await action();
      return count;
    } finally {
      count = undefined;
    }
  };
}

/** A company with `live` live keys (its first included) and `test` keys of its sandbox: their prefixes. */
async function companyWithKeys(live: number, test: number) {
  const { companyId } = await newCompany();
  for (let i = 0; i < test; i++) await (i === 0 ? newTestKey(companyId) : createKey(pool(), companyId, 'test'));
  for (let i = 1; i < live; i++) await createKey(pool(), companyId);
  const { rows } = await pool().query<{ prefix: string; test: boolean }>(
    `SELECT prefix, company_id <> $1 AS test FROM api_keys
      WHERE company_id IN (SELECT id FROM companies WHERE id = $1 OR sandbox_of = $1)`,
    [companyId],
  );
  return { companyId, prefixes: (test: boolean) => rows.filter((row) => row.test === test).map((row) => row.prefix) };
}

describe('the audit trail of a revoked integration', () => {
  it('records every key it deletes as revoked, in one statement for thirty keys as for two', async () => {
    const { app, pool: own } = newApp();
    const counted = statementCounter(own);
    try {
      const revoke = (companyId: string) =>
        counted(() => api(app).delete(`/internal/companies/${companyId}/integration`).set(auth).expect(204));
      const few = await companyWithKeys(1, 1);
      const many = await companyWithKeys(20, 10);
      const [fewStatements, manyStatements] = [await revoke(few.companyId), await revoke(many.companyId)];
      expect([fewStatements, manyStatements]).to.deep.equal([1, 1]);

      const { body: trail } = await api()
        .get(`/internal/companies/${many.companyId}/audit-events?limit=100`)
        .set(auth)
        .expect(200);
      const revoked = (trail as Entry[]).filter((e) => e.action !== 'key.generated').reverse();
      expect(revoked[0]).to.deep.include({ action: 'integration.revoked', subject: '', details: {} });
      const keys = revoked.slice(1);
      expect(keys.map((e) => e.action)).to.deep.equal(Array(30).fill('key.revoked'));
      const withIt = (mode: string) => ({ mode, with: 'the integration' });
      expect(keys.map((e) => e.details)).to.deep.equal([
        ...Array(20).fill(withIt('live')),
        ...Array(10).fill(withIt('test')),
      ]);
      expect(new Set(keys.slice(0, 20).map((e) => e.subject))).to.deep.equal(new Set(many.prefixes(false)));
      expect(new Set(keys.slice(20).map((e) => e.subject))).to.deep.equal(new Set(many.prefixes(true)));
    } finally {
      await own.end();
    }
  });
});
