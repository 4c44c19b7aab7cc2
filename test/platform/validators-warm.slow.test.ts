import { expect } from 'chai';
import * as ajvCore from 'ajv/dist/core.js';
import { warmUp } from '../../src/app.js';
import { api, newApp, newCompany, reportInput, APP_TOKEN } from '../support/harness.js';

/**
 * The validators of every operation are built before the service listens (serving-process.ts): built by the first
 * request of each operation instead, they blocked the event loop (and every other company's requests)
 * for tens to hundreds of milliseconds. Building one means adding its schemas to an Ajv instance.
 */
describe('validators built before the first request', () => {
  // The class every Ajv of express-openapi-validator is (the core of ajv's draft classes).
  type AddSchema = (this: unknown, ...args: unknown[]) => unknown;
  const core = ajvCore as unknown as { default: { prototype: { addSchema: AddSchema } } };
  const prototype = core.default.prototype;
  let added = 0;
  const addSchema = prototype.addSchema;
  before(() => {
    prototype.addSchema = function (this: unknown, ...args: unknown[]) {
      added++;
      return addSchema.apply(this, args);
    };
  });
  after(() => {
    prototype.addSchema = addSchema;
  });

  /** One request of several operations, answered with their own statuses: how many schemas they added. */
  async function schemasAddedBy(app: Parameters<typeof api>[0]): Promise<number> {
    const company = await newCompany();
    const before = added;
    await api(app).get('/auth').set('X-API-KEY', company.key).expect(200);
    const { body } = await api(app).post('/reports/new').set('X-API-KEY', company.key).send(reportInput()).expect(200);
    await api(app).get(`/reports/${body.id}`).set('X-API-KEY', company.key).expect(200);
    await api(app).get('/reports?limit=5').set('X-API-KEY', company.key).expect(200);
    await api(app).get('/reports/00000000-0000-4000-8000-000000000000').set('X-API-KEY', company.key).expect(404);
    await api(app)
      .get(`/internal/companies/${company.companyId}/api-keys`)
      .set('Authorization', `Bearer ${APP_TOKEN}`)
      .expect(200);
    return added - before;
  }

  it('adds no schema when the app was warmed up (not ready meanwhile); its first requests otherwise do', async () => {
    // Each with validators of its own: the test processes' apps otherwise share theirs, already built.
    const cold = newApp({ validator: undefined }).app;
    expect(await schemasAddedBy(cold), 'a cold app builds validators as requests come').to.be.greaterThan(0);
    const warm = newApp({ validator: undefined }).app;
    const warming = warmUp(warm);
    // Meanwhile it is not ready: a load balancer sends it nothing yet.
    const starting = await api(warm).get('/readyz').expect(503);
    expect(starting.body.error).to.equal('starting: the validators are being built');
    expect(starting.headers['retry-after']).to.match(/^\d+$/);
    await warming;
    await api(warm).get('/readyz').expect(200);
    expect(await schemasAddedBy(warm), 'a warmed app has built them all').to.equal(0);
  });
});
