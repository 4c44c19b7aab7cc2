import { expect } from 'chai';
import express from 'express';
import request from 'supertest';
import { KEEP_ALIVE_TIMEOUT_MS, listen, REQUEST_TIMEOUT_MS } from '../../src/platform/http/listen.js';
import { APP_TOKEN, api, app, newCompany, reportInput } from '../support/harness.js';

describe('HTTP hardening', () => {
  it('sends the security headers that apply to a JSON API, on answers and on errors, and no X-Powered-By', async () => {
    const { key } = await newCompany();
    for (const res of [
      await api().get('/auth').set('X-API-KEY', key).expect(200),
      await api().get('/nope').expect(404),
    ]) {
      expect(res.headers).to.include({
        'content-security-policy': "default-src 'none';frame-ancestors 'none'",
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'SAMEORIGIN',
        'referrer-policy': 'no-referrer',
        'cross-origin-resource-policy': 'same-origin',
        'strict-transport-security': 'max-age=31536000; includeSubDomains',
      });
      expect(res.headers).not.to.have.property('x-powered-by');
    }
  });

  it('sends Cache-Control: no-store on every answer of the API, errors included, and lets the documents be cached', async () => {
    const { key, companyId } = await newCompany();
    const bearer = `Bearer ${APP_TOKEN}`;
    const answers = [
      await api().get('/auth').set('X-API-KEY', key).expect(200),
      await api().get('/auth').expect(400),
      await api().get('/auth').set('X-API-KEY', 'irk_unknown').expect(400),
      await api().get('/reports?limit=1').set('X-API-KEY', key).expect(200),
      await api().get('/reports/6f1c1d1e-0000-4000-8000-000000000000').set('X-API-KEY', key).expect(404),
      await api().post('/reports/new').set('X-API-KEY', key).send({}).expect(400),
      await api().delete('/reports').set('X-API-KEY', key).expect(405),
      await api().get(`/internal/companies/${companyId}/integration`).set('Authorization', bearer).expect(200),
      await api().get(`/internal/companies/${companyId}/integration`).expect(401),
      await api().get('/metrics').set('Authorization', bearer).expect(200),
      await api().get('/metrics').expect(401),
      await api().get('/readyz').expect(200),
    ];
    for (const res of answers) expect(res.headers['cache-control'], `${res.status} ${res.text}`).to.equal('no-store');
    // The published document is outside the contract's operations: the same for everyone, cacheable.
    expect((await request(app()).get('/openapi.json').expect(200)).headers).not.to.have.property('cache-control');
  });

  it('sends no ETag, so a conditional request gets the full answer (the contract declares neither ETag nor 304)', async () => {
    const { key } = await newCompany();
    const res = await api().get('/auth').set('X-API-KEY', key).expect(200);
    expect(res.headers).not.to.have.property('etag');
    await api()
      .get('/auth')
      .set('X-API-KEY', key)
      .set('If-None-Match', 'W/"f-51rzdr5zfwWQpf+iUepheZg7siQ"')
      .expect(200, { result: 'ok' });
  });

  it('accepts a body up to 1 MiB and refuses a larger one with 413', async () => {
    const { key } = await newCompany();
    const body = (size: number) => {
      const text = JSON.stringify(reportInput({ notes: '' }));
      return text.replace('"notes":""', `"notes":"${'n'.repeat(size - text.length)}"`);
    };
    expect(Buffer.byteLength(body(1024 * 1024))).to.equal(1024 * 1024);
    // Within the limit the body is read (and refused by the schema: notes are at most 100,000 characters).
    const within = await api()
      .post('/reports/new')
      .set('X-API-KEY', key)
      .type('json')
      .send(body(1024 * 1024))
      .expect(400);
    expect(within.body.error).to.match(/^notes /);
    const over = await api()
      .post('/reports/new')
      .set('X-API-KEY', key)
      .type('json')
      .send(body(1024 * 1024 + 1))
      .expect(413);
    expect(over.body).to.deep.equal({ error: 'request body is larger than 1 MiB' });
  });

  it('keeps idle connections longer than a load balancer does, and gives a request 30 s, checked every second', async () => {
    const server = await listen(express(), 0, '127.0.0.1');
    try {
      expect(server.keepAliveTimeout).to.equal(KEEP_ALIVE_TIMEOUT_MS).and.be.greaterThan(60_000);
      expect(server.requestTimeout).to.equal(REQUEST_TIMEOUT_MS).and.equal(30_000);
      // The request timeout covers the headers too (test/operations/node-errors.slow.test.ts shows both cut).
      expect(server.headersTimeout).to.be.within(1, server.requestTimeout);
      expect((server as { connectionsCheckingInterval?: number }).connectionsCheckingInterval).to.equal(1_000);
    } finally {
      server.close();
    }
  });
});
