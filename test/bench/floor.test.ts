import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createFloorApp } from '../../scripts/bench/floor.js';
import { api, newCompany, pool, reportInput, unique, type TestCompany } from '../support/harness.js';

/**
 * The benchmark's floor bounds what the service could reach only if it does the same work per request:
 * the same reports, pages and writes, from the same data layer, with nothing around it. (It sends none of
 * the headers the contract requires, so its answers are compared with the service's, not with openapi.yaml.)
 */
describe('bench: the floor', () => {
  let company: TestCompany;
  let floor: Express;

  before(async () => {
    company = await newCompany([{ name: 'Dana Inspector', email: 'dana@floor.example' }]);
    floor = createFloorApp(pool());
  });

  it('creates, updates by restId, reads and lists exactly what the service answers', async () => {
    const restId = unique('floor');
    const input = reportInput({ restId, inspectorEmails: 'dana@floor.example', invoiceItems: ['Radon test: $150'] });
    const created = await request(floor).post('/reports/new').set('X-API-KEY', company.key).send(input).expect(200);
    const { id } = created.body as { id: string };
    await request(floor)
      .post('/reports/new')
      .set('X-API-KEY', company.key)
      .send({ ...input, notes: 'updated' })
      .expect(200, { result: 'ok', id });
    await api().post('/reports/new').set('X-API-KEY', company.key).send(reportInput()).expect(200);

    const fromService = await api().get(`/reports/${id}`).set('X-API-KEY', company.key).expect(200);
    expect(fromService.body).to.include({ restId, inspectorNotes: 'updated', inspectorName: 'Dana Inspector' });
    const fromFloor = await request(floor).get(`/reports/${id}`).set('X-API-KEY', company.key).expect(200);
    expect(fromFloor.body).to.deep.equal(fromService.body);

    const servicePage = await api().get('/reports?limit=1').set('X-API-KEY', company.key).expect(200);
    const floorPage = await request(floor).get('/reports?limit=1').set('X-API-KEY', company.key).expect(200);
    expect(floorPage.body).to.deep.equal(servicePage.body).and.to.have.length(1);
    expect(floorPage.get('Link')).to.equal(servicePage.get('Link'));
  });
});
