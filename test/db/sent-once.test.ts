import { expect } from 'chai';
import pg from 'pg';
import { createApp } from '../../src/app.js';
import type { Queryable } from '../../src/db/pool.js';
import { SentOnce } from '../../src/db/sent-once.js';
import { ReportWriter } from '../../src/reports/write.js';
import { api, appDeps, databaseUrl, newCompany, pool, reportInput, unique } from '../support/harness.js';
import { until } from '../support/wait.js';

/**
 * db/sent-once.ts against the test database: a write's statement text is held until pg sends it,
 * not until the database answers (a large one would otherwise outlive a young-generation collection).
 */
describe('a query parameter sent once', () => {
  it('is sent as its text, held no longer once sent, while the database still works on the query', async () => {
    const client = new pg.Client({ connectionString: databaseUrl() });
    await client.connect();
    try {
      const param = new SentOnce('{"notes": "€ \\" \\\\ \\u0001 😀"}');
      expect(param.held).to.equal(true);
      let answered = false;
      const query = client.query<{ v: unknown }>('SELECT $1::jsonb AS v, pg_sleep(0.3)', [param]).then((r) => {
        answered = true;
        return r;
      });
      await until(() => !param.held, 'the text released');
      expect(answered, 'released before the answer').to.equal(false);
      const { rows } = await query;
      expect(rows[0]!.v).to.deep.equal({ notes: '€ " \\ \u0001 😀' });
    } finally {
      await client.end();
    }
  });

  it('throws when read twice: a second send is a fault, never NULL sent instead', () => {
    const param = new SentOnce('[]');
    expect(param.toPostgres()).to.equal('[]');
    expect(() => param.toPostgres()).to.throw('read twice');
  });

  it("carries every report write's input: none of them holds its text once the write is answered", async () => {
    const company = await newCompany([{ name: 'Dana Inspector', email: 'dana@example.com' }]);
    const inputs: unknown[] = [];
    const recording: Queryable = {
      query: ((...args: unknown[]) => {
        const config = args[0] as { name?: string; values?: unknown[] };
        if (config?.name?.startsWith('report-upsert')) inputs.push(config.values![0]);
        return (pool().query as (...a: unknown[]) => unknown)(...args);
      }) as Queryable['query'],
    };
    const target = createApp(appDeps(pool(), { writes: new ReportWriter(recording) }));
    const notes = 'n'.repeat(100_000);
    const restId = unique('sent-once');
    for (const body of [reportInput({ restId }), reportInput({ restId, notes })]) {
      await api(target).post('/reports/new').set('X-API-KEY', company.key).send(body).expect(200);
    }
    expect(inputs).to.have.length(2);
    for (const input of inputs) {
      expect(input).to.be.instanceOf(SentOnce);
      expect((input as SentOnce).held).to.equal(false);
    }
    const list = await api(target).get(`/reports?restId=${restId}`).set('X-API-KEY', company.key).expect(200);
    expect(list.body[0].inspectorNotes).to.equal(notes);
  });
});
