import { expect } from 'chai';
import request from 'supertest';
import { api, app, newCompany, reportInput, type TestCompany } from '../support/harness.js';
import { spec } from '../support/contract.js';

type Responses = Record<string, { $ref?: string; headers?: Record<string, unknown> }>;

describe('HTTP semantics every response shares', () => {
  let company: TestCompany;
  let reportId: string;

  before(async () => {
    company = await newCompany();
    for (const inspectionDate of ['2026-03-14', '2026-03-15']) {
      const res = await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send(reportInput({ inspectionDate }))
        .expect(200);
      reportId = res.body.id;
    }
  });

  it('declares X-Request-Id on every response of every operation', () => {
    const components = (spec.components as { responses: Responses }).responses;
    const missing: string[] = [];
    for (const [path, item] of Object.entries(
      spec.paths as Record<string, Record<string, { responses?: Responses }>>,
    )) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          const declared = response.$ref ? components[response.$ref.split('/').pop()!]! : response;
          if (!declared.headers?.['X-Request-Id']) missing.push(`${method} ${path} ${status}`);
        }
      }
    }
    expect(missing).to.deep.equal([]);
  });

  it('answers HEAD on every GET operation like GET, without a body', async () => {
    const cases: [string, Record<string, string>][] = [
      ['/auth', { 'X-API-KEY': company.key }],
      ['/auth', {}],
      ['/reports?limit=1', { 'X-API-KEY': company.key }],
      ['/reports?limit=0', { 'X-API-KEY': company.key }],
      [`/reports/${reportId}`, { 'X-API-KEY': company.key }],
      ['/reports/5b0c6e2e-8f9a-4d55-9d4e-0c1f8e6f2a10', { 'X-API-KEY': company.key }],
      ['/healthz', {}],
      ['/openapi.json', {}],
    ];
    for (const [path, headers] of cases) {
      const get = await request(app()).get(path).set(headers);
      const head = await request(app()).head(path).set(headers);
      expect(head.status, `HEAD ${path}`).to.equal(get.status);
      for (const name of ['content-type', 'content-length', 'link', 'allow']) {
        expect(head.headers[name], `HEAD ${path}: ${name}`).to.equal(get.headers[name]);
      }
      expect(head.headers['x-request-id'], `HEAD ${path}`).to.be.a('string');
      expect(head.text ?? '', `HEAD ${path}`).to.equal('');
    }
  });

  it('lists HEAD beside GET in Allow', async () => {
    const res = await request(app()).delete(`/reports/${reportId}`).set('X-API-KEY', company.key).expect(405);
    expect(res.headers.allow).to.equal('GET, HEAD');
    expect(res.body).to.deep.equal({ error: `method DELETE is not allowed on /reports/${reportId}` });
  });

  it('sends no ETag, and answers in full whatever If-None-Match says (the document offers no 304)', async () => {
    const first = await api().get(`/reports/${reportId}`).set('X-API-KEY', company.key).expect(200);
    expect(first.headers.etag).to.equal(undefined);
    for (const condition of ['*', 'W/"anything"']) {
      const again = await api()
        .get(`/reports/${reportId}`)
        .set({ 'X-API-KEY': company.key, 'If-None-Match': condition })
        .expect(200);
      expect(again.body).to.deep.equal(first.body);
    }
  });
});
