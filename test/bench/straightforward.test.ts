import { expect } from 'chai';
import type { Express } from 'express';
import type pg from 'pg';
import type { Response } from 'supertest';
import { createStraightforwardApp } from '../../scripts/bench/straightforward/app.js';
import { createLogger } from '../../src/platform/observability/logger.js';
import { api, newCompany, reportInput, unique, type TestCompany } from '../support/harness.js';
import { yardstickPool } from './yardstick-tables.js';

/**
 * The benchmark's yardstick must be a faithful implementation of the same contract, or its ratios mean
 * nothing: it answers what the service answers (every response checked against openapi.yaml by api()).
 */
describe('bench: the straightforward implementation', () => {
  let company: TestCompany;
  let straightforward: Express;
  let ownPool: pg.Pool;
  const ids: string[] = [];

  before(async () => {
    company = await newCompany([
      { name: 'Dana Inspector', email: 'dana@straight.example' },
      { name: 'İlkay Inspector', email: 'İnspector@straight.example' },
    ]);
    for (const [i, date] of ['2026-03-14', '2026-03-15', '2026-03-14'].entries()) {
      const res = await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send(
          reportInput({
            restId: `crm-${i}`,
            inspectionDate: date,
            clientNames: ['Jordan Smith', 'Casey Smith'],
            inspectorEmails: 'DANA@straight.example',
            invoiceItems: ['Home inspection: $450', 'Radon test: $1,150.5'],
            notes: 'Gate code 4321',
          }),
        )
        .expect(200);
      ids.push((res.body as { id: string }).id);
    }
    ownPool = await yardstickPool();
    straightforward = createStraightforwardApp({ pool: ownPool, logger: createLogger('silent') });
  });

  after(async () => {
    await ownPool?.end();
  });

  it('answers a report exactly as the service does', async () => {
    for (const id of ids) {
      const fromService = await api().get(`/reports/${id}`).set('X-API-KEY', company.key).expect(200);
      const fromStraightforward = await api(straightforward)
        .get(`/reports/${id}`)
        .set('X-API-KEY', company.key)
        .expect(200);
      expect(fromStraightforward.body).to.deep.equal(fromService.body);
    }
    await api(straightforward).get('/reports/not-an-id').set('X-API-KEY', company.key).expect(404);
    await api(straightforward).get(`/reports/${ids[0]}`).set('X-API-KEY', 'irk_unknown').expect(400);
  });

  it('lists pages in the service order, following Link', async () => {
    const walk = async (app?: Express) => {
      const seen: unknown[] = [];
      let next: string | undefined = '/reports?limit=2';
      for (let i = 0; next && i < 5; i++) {
        const res: Response = await api(app).get(next).set('X-API-KEY', company.key).expect(200);
        seen.push(...(res.body as unknown[]));
        next = /<([^>]+)>;\s*rel="next"/.exec(res.get('Link') ?? '')?.[1];
      }
      return seen;
    };
    const fromStraightforward = await walk(straightforward);
    expect(fromStraightforward).to.have.length(3);
    expect(fromStraightforward).to.deep.equal(await walk());
  });

  it('creates, merges an update by restId and refuses unknown inspectors', async () => {
    const restId = unique('straight');
    const created = await api(straightforward)
      .post('/reports/new')
      .set('X-API-KEY', company.key)
      .send(
        reportInput({
          restId,
          notes: 'first',
          agentName: 'Riley',
          inspectorEmails: 'dana@straight.example',
          invoiceItems: ['Home inspection: $450', 'Radon test: $150'],
        }),
      )
      .expect(200);
    const { id } = created.body as { id: string };
    await api(straightforward)
      .post('/reports/new')
      .set('X-API-KEY', company.key)
      .send(reportInput({ restId, notes: '', invoiceItems: 'Fee: $0' }))
      .expect(200, { result: 'ok', id });
    const read = await api(straightforward).get(`/reports/${id}`).set('X-API-KEY', company.key).expect(200);
    expect(read.body).to.include({ inspectorNotes: '', agentName: 'Riley', inspectorName: 'Dana Inspector' });
    expect((read.body as { invoiceItems: string[] }).invoiceItems).to.deep.equal(['Fee: $0.00']);
    const refused = await api(straightforward)
      .post('/reports/new')
      .set('X-API-KEY', company.key)
      .send(reportInput({ inspectorEmails: 'nobody@straight.example' }))
      .expect(400);
    expect(refused.body).to.deep.equal({
      error: 'inspectorEmails are not users of this company: nobody@straight.example',
    });
  });

  it('matches inspectors as the service does: by the address stored (İ too), a repeat in another case once', async () => {
    const send = (target: Express | undefined, inspectorEmails: string[]) =>
      api(target).post('/reports/new').set('X-API-KEY', company.key).send(reportInput({ inspectorEmails }));
    const inspectorsOf = async (target: Express | undefined) => {
      const { body } = await send(target, [
        'İnspector@straight.example',
        'DANA@straight.example',
        'dana@Straight.example',
      ]).expect(200);
      const read = await api(target)
        .get(`/reports/${(body as { id: string }).id}`)
        .set('X-API-KEY', company.key)
        .expect(200);
      const { inspectorName, inspectorEmail } = read.body as Record<string, string>;
      return { inspectorName, inspectorEmail };
    };
    const fromService = await inspectorsOf(undefined);
    expect(fromService).to.deep.equal({
      inspectorName: 'İlkay Inspector, Dana Inspector',
      inspectorEmail: 'İnspector@straight.example, dana@straight.example',
    });
    expect(await inspectorsOf(straightforward)).to.deep.equal(fromService);
    const unknown = ['Ghost@straight.example', 'GHOST@straight.example'];
    const refused = await send(undefined, unknown).expect(400);
    await send(straightforward, unknown).expect(400, refused.body);
  });
});
