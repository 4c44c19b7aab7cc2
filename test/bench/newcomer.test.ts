import { expect } from 'chai';
import type { Express } from 'express';
import type pg from 'pg';
import { createNewcomerApp } from '../../scripts/bench/newcomer/app.js';
import { createStraightforwardApp } from '../../scripts/bench/straightforward/app.js';
import { createLogger } from '../../src/platform/observability/logger.js';
import { api, newCompany, reportInput, unique, type TestCompany } from '../support/harness.js';
import { yardstickPool } from './yardstick-tables.js';

// The second yardstick must store what the service stores, or its ratio means nothing: its creates are
// read back through the straightforward implementation, which reads the same tables.
describe('bench: the newcomer yardstick', () => {
  let company: TestCompany;
  let newcomer: Express;
  let reader: Express;
  let ownPool: pg.Pool;

  before(async () => {
    company = await newCompany([{ name: 'Noa Inspector', email: 'noa@newcomer.example' }]);
    ownPool = await yardstickPool();
    newcomer = createNewcomerApp(ownPool);
    reader = createStraightforwardApp({ pool: ownPool, logger: createLogger('silent') });
  });

  after(async () => {
    await ownPool?.end();
  });

  it('stores a create as the service does', async () => {
    const created = async (target: Express | undefined) => {
      const input = reportInput({
        restId: unique('newcomer'),
        notes: 'Gate code 4321',
        inspectorEmails: 'NOA@newcomer.example',
        invoiceItems: ['Home inspection: $450', 'Radon test: $1,150.5'],
      });
      const res = await api(target).post('/reports/new').set('X-API-KEY', company.key).send(input).expect(200);
      const { id } = res.body as { id: string };
      const read = await api(target === undefined ? undefined : reader)
        .get(`/reports/${id}`)
        .set('X-API-KEY', company.key)
        .expect(200);
      const {
        id: _id,
        restId: _restId,
        createdAt: _c,
        updatedAt: _u,
        ...report
      } = read.body as Record<string, unknown>;
      return report;
    };
    const fromService = await created(undefined);
    expect(fromService).to.include({ inspectorName: 'Noa Inspector' });
    expect(await created(newcomer)).to.deep.equal(fromService);
  });

  it('refuses an unknown inspector, writing nothing, and an unknown key', async () => {
    const restId = unique('newcomer');
    const send = (key: string) =>
      api(newcomer)
        .post('/reports/new')
        .set('X-API-KEY', key)
        .send(reportInput({ restId, inspectorEmails: 'nobody@newcomer.example' }));
    await send(company.key).expect(400);
    const { rows } = await ownPool.query('SELECT count(*)::int AS n FROM reports WHERE rest_id = $1', [restId]);
    expect(rows[0].n).to.equal(0);
    await send('irk_unknown').expect(400);
  });
});
