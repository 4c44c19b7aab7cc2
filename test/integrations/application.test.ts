import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { APP_TOKEN, api, newApp, newCompany, pool, reportInput, unique } from '../support/harness.js';

/** What GET …/integration shows for a company without an active integration. */
const NO_INTEGRATION = {
  active: false,
  webhookUrl: null,
  secret: null,
  previousSecretExpiresAt: null,
  webhookStatus: 'active',
  webhookDisabledReason: '',
  eventTypes: ['report.published'],
  keys: [],
};

const auth = { Authorization: `Bearer ${APP_TOKEN}` };
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MISSING_UUID = '00000000-0000-4000-8000-000000000000';

async function createCompanyThroughApi(): Promise<string> {
  const res = await api()
    .post('/internal/companies')
    .set(auth)
    .send({ name: unique('Acme') })
    .expect(201);
  return res.body.id as string;
}

async function generateKey(companyId: string): Promise<{ id: string; key: string; prefix: string; createdAt: string }> {
  return (await api().post(`/internal/companies/${companyId}/api-keys`).set(auth).expect(201)).body;
}

describe('application API: authentication', () => {
  it('answers 401 naming the missing token when Authorization is absent or not Bearer', async () => {
    const missing = { error: 'missing application token: send Authorization: Bearer <APP_TOKEN>' };
    const res = await api().post('/internal/companies').send({ name: 'x' }).expect(401, missing);
    expect(res.headers['www-authenticate']).to.equal('Bearer');
    await api()
      .post('/internal/companies')
      .set('Authorization', `Basic ${APP_TOKEN}`)
      .send({ name: 'x' })
      .expect(401, missing);
  });

  it('answers 401 "invalid application token" for a wrong token, also one that only shares a prefix', async () => {
    const invalid = { error: 'invalid application token' };
    await api()
      .get(`/internal/companies/${MISSING_UUID}/integration`)
      .set('Authorization', 'Bearer nope')
      .expect(401, invalid);
    await api()
      .get(`/internal/companies/${MISSING_UUID}/integration`)
      .set('Authorization', `Bearer ${APP_TOKEN.slice(0, -1)}`)
      .expect(401, invalid);
  });

  it('checks the token before the body, so an unauthenticated caller learns nothing about validation', async () => {
    await api()
      .post('/internal/companies')
      .set('Content-Type', 'application/json')
      .send('{bad')
      .expect(401, { error: 'missing application token: send Authorization: Bearer <APP_TOKEN>' });
  });

  it('answers 405 with Allow for a method an internal path lacks, and 404 for an unknown internal path', async () => {
    const res = await api().delete(`/internal/companies/${MISSING_UUID}/webhook`).set(auth).expect(405);
    expect(res.headers.allow).to.equal('PUT');
    await api().get('/internal/nope').set(auth).expect(404, { error: 'no route GET /internal/nope' });
  });

  it('refuses unknown query parameters with 400 naming them, also where there is no body', async () => {
    const companyId = await createCompanyThroughApi();
    const { body: report } = await api()
      .post(`/internal/companies/${companyId}/reports`)
      .set(auth)
      .send(reportInput())
      .expect(201);
    const calls: [method: 'get' | 'post' | 'delete', path: string][] = [
      ['post', `/internal/companies/${companyId}/api-keys`],
      ['get', `/internal/companies/${companyId}/api-keys`],
      ['delete', `/internal/companies/${companyId}/api-keys/${MISSING_UUID}`],
      ['get', `/internal/companies/${companyId}/integration`],
      ['delete', `/internal/companies/${companyId}/integration`],
      ['post', `/internal/companies/${companyId}/reports/${report.id}/start`],
      ['get', `/internal/companies/${companyId}/webhook-deliveries`],
    ];
    for (const [method, path] of calls) {
      await api()[method](`${path}?x=1`).set(auth).expect(400, { error: 'unknown query parameter: x' });
    }
  });

  it('does not accept a partner API key in place of the application token', async () => {
    const { key } = await newCompany();
    await api()
      .post('/internal/companies')
      .set('X-API-KEY', key)
      .set('Authorization', `Bearer ${key}`)
      .send({ name: 'x' })
      .expect(401, { error: 'invalid application token' });
  });
});

describe('application API: companies and users', () => {
  it('creates a company: 201 {id, name}', async () => {
    const name = unique('Acme Inspections');
    const res = await api().post('/internal/companies').set(auth).send({ name }).expect(201);
    expect(res.body).to.deep.equal({ id: res.body.id, name });
  });

  it('refuses a company without a name or with unknown fields', async () => {
    await api().post('/internal/companies').set(auth).send({}).expect(400, { error: 'name is required' });
    await api()
      .post('/internal/companies')
      .set(auth)
      .send({ name: 'x', plan: 'gold' })
      .expect(400, { error: 'unknown field: plan' });
  });

  it('adds a user: 201 {id, name, email}; the same e-mail in any case is 409', async () => {
    const companyId = await createCompanyThroughApi();
    const res = await api()
      .post(`/internal/companies/${companyId}/users`)
      .set(auth)
      .send({ name: 'Dana Inspector', email: 'Dana@Example.com' })
      .expect(201);
    expect(res.body).to.deep.equal({ id: res.body.id, name: 'Dana Inspector', email: 'Dana@Example.com' });
    await api()
      .post(`/internal/companies/${companyId}/users`)
      .set(auth)
      .send({ name: 'Other', email: 'dana@example.COM' })
      .expect(409, { error: 'the company already has a user with e-mail dana@example.COM' });
  });

  it('lets another company use the same e-mail, and refuses one that is not an address', async () => {
    const [a, b] = [await createCompanyThroughApi(), await createCompanyThroughApi()];
    await api()
      .post(`/internal/companies/${a}/users`)
      .set(auth)
      .send({ name: 'D', email: 'd@example.com' })
      .expect(201);
    await api()
      .post(`/internal/companies/${b}/users`)
      .set(auth)
      .send({ name: 'D', email: 'd@example.com' })
      .expect(201);
    await api()
      .post(`/internal/companies/${b}/users`)
      .set(auth)
      .send({ name: 'D', email: 'nope' })
      .expect(400, { error: 'email must be an e-mail address' });
  });

  it('answers 404 for an unknown company and for a company id that is not a UUID (never 500)', async () => {
    for (const id of [MISSING_UUID, 'not-a-uuid', "1'; DROP TABLE companies; --", 'c'.repeat(101)]) {
      const res = await api()
        .post(`/internal/companies/${encodeURIComponent(id)}/users`)
        .set(auth)
        .send({ name: 'D', email: 'd@example.com' })
        .expect(404);
      expect(res.body).to.deep.equal({ error: `company ${id} not found` });
      await api()
        .get(`/internal/companies/${encodeURIComponent(id)}/api-keys`)
        .set(auth)
        .expect(404);
    }
  });
});

describe('application API: API keys', () => {
  it('generates a high-entropy key with the irk_ prefix, shown once and stored only as its SHA-256', async () => {
    const companyId = await createCompanyThroughApi();
    const created = await generateKey(companyId);
    expect(created.key).to.match(/^irk_[A-Za-z0-9_-]{43}$/); // 32 random bytes: 256 bits
    expect(created.prefix).to.equal(created.key.slice(0, 12));
    expect(created.createdAt).to.match(ISO_MS);
    await api().get('/auth').set('X-API-KEY', created.key).expect(200, { result: 'ok' });

    const { rows } = await pool().query('SELECT * FROM api_keys WHERE company_id = $1', [companyId]);
    expect(rows).to.have.length(1);
    expect(Buffer.compare(rows[0].key_hash, createHash('sha256').update(created.key).digest())).to.equal(0);
    expect(JSON.stringify(rows[0])).to.not.include(created.key.slice(4));
    const listed = await api().get(`/internal/companies/${companyId}/api-keys`).set(auth).expect(200);
    expect(JSON.stringify(listed.body)).to.not.include(created.key.slice(4));
  });

  it('starts one integration when keys are generated in parallel for a company without one', async () => {
    const companyId = await createCompanyThroughApi();
    const created = await Promise.all(
      Array.from({ length: 10 }, () => api().post(`/internal/companies/${companyId}/api-keys`).set(auth)),
    );
    expect(created.map((res) => res.status)).to.deep.equal(Array(10).fill(201));
    const { rows } = await pool().query(
      'SELECT count(DISTINCT integration_id)::int AS integrations, count(*)::int AS keys FROM api_keys WHERE company_id = $1',
      [companyId],
    );
    expect(rows[0]).to.deep.equal({ integrations: 1, keys: 10 });
    const listed = await api().get(`/internal/companies/${companyId}/api-keys`).set(auth).expect(200);
    expect(listed.body).to.have.length(10);
  });

  it('lists keys newest first with lastUsedAt, null until the key is used', async () => {
    const companyId = await createCompanyThroughApi();
    const first = await generateKey(companyId);
    const second = await generateKey(companyId);
    const before = await api().get(`/internal/companies/${companyId}/api-keys`).set(auth).expect(200);
    expect(before.body).to.deep.equal([
      { id: second.id, prefix: second.prefix, createdAt: second.createdAt, lastUsedAt: null, mode: 'live' },
      { id: first.id, prefix: first.prefix, createdAt: first.createdAt, lastUsedAt: null, mode: 'live' },
    ]);
    await api().get('/auth').set('X-API-KEY', first.key).expect(200);
    const after = await api().get(`/internal/companies/${companyId}/api-keys`).set(auth).expect(200);
    expect(after.body[1].lastUsedAt).to.match(ISO_MS);
    expect(after.body[0].lastUsedAt).to.equal(null);
  });

  it('writes lastUsedAt at most once a minute per key', async () => {
    const companyId = await createCompanyThroughApi();
    const { id, key } = await generateKey(companyId);
    const lastUsed = async () =>
      (await pool().query('SELECT last_used_at FROM api_keys WHERE id = $1', [id])).rows[0].last_used_at as Date;
    await api().get('/auth').set('X-API-KEY', key).expect(200);
    const firstUse = await lastUsed();
    await api().get('/auth').set('X-API-KEY', key).expect(200);
    expect((await lastUsed()).getTime()).to.equal(firstUse.getTime());
    // Once the recorded use is over a minute old, the next lookup of the key records again (a new
    // process, so that no per-process cache of the key can answer instead of the database).
    await pool().query(`UPDATE api_keys SET last_used_at = last_used_at - interval '61 seconds' WHERE id = $1`, [id]);
    const aged = await lastUsed();
    const other = newApp();
    try {
      await api(other.app).get('/auth').set('X-API-KEY', key).expect(200);
    } finally {
      await other.pool.end();
    }
    expect((await lastUsed()).getTime()).to.be.greaterThan(aged.getTime());
  });

  it('revokes one key: refused on the very next request by every server process, the other key still works', async () => {
    const companyId = await createCompanyThroughApi();
    const revoked = await generateKey(companyId);
    const kept = await generateKey(companyId);
    const processA = newApp();
    const processB = newApp();
    try {
      for (const p of [processA, processB]) await api(p.app).get('/auth').set('X-API-KEY', revoked.key).expect(200);
      await api(processA.app).delete(`/internal/companies/${companyId}/api-keys/${revoked.id}`).set(auth).expect(204);
      for (const p of [processB, processA]) {
        await api(p.app).get('/auth').set('X-API-KEY', revoked.key).expect(400, { error: 'invalid API key' });
        await api(p.app).get('/auth').set('X-API-KEY', kept.key).expect(200);
      }
      const listed = await api().get(`/internal/companies/${companyId}/api-keys`).set(auth).expect(200);
      expect(listed.body.map((k: { id: string }) => k.id)).to.deep.equal([kept.id]);
    } finally {
      await Promise.all([processA.pool.end(), processB.pool.end()]);
    }
  });

  it('answers 404 for a key that is unknown, malformed, already revoked or of another company', async () => {
    const companyId = await createCompanyThroughApi();
    const other = await createCompanyThroughApi();
    const { id } = await generateKey(companyId);
    await api()
      .delete(`/internal/companies/${other}/api-keys/${id}`)
      .set(auth)
      .expect(404, { error: `API key ${id} not found` });
    for (const keyId of ['nope', 'k'.repeat(101)]) {
      await api()
        .delete(`/internal/companies/${companyId}/api-keys/${keyId}`)
        .set(auth)
        .expect(404, { error: `API key ${keyId} not found` });
    }
    await api().delete(`/internal/companies/${companyId}/api-keys/${id}`).set(auth).expect(204);
    await api().delete(`/internal/companies/${companyId}/api-keys/${id}`).set(auth).expect(404);
  });
});

describe('application API: webhook address and integration', () => {
  it('sets an https address with a fresh whsec_ secret every time it is set', async () => {
    const companyId = await createCompanyThroughApi();
    const url = 'https://crm.example.com/hooks/inspections?tenant=7';
    const first = await api().put(`/internal/companies/${companyId}/webhook`).set(auth).send({ url }).expect(200);
    expect(first.body.url).to.equal(url);
    expect(first.body.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const second = await api().put(`/internal/companies/${companyId}/webhook`).set(auth).send({ url }).expect(200);
    expect(second.body.secret).to.not.equal(first.body.secret);
    const integration = await api().get(`/internal/companies/${companyId}/integration`).set(auth).expect(200);
    expect(integration.body).to.deep.equal({
      active: true,
      webhookUrl: url,
      secret: second.body.secret,
      previousSecretExpiresAt: null,
      webhookStatus: 'active',
      webhookDisabledReason: '',
      eventTypes: ['report.published'],
      keys: [],
    });
  });

  it('refuses an address that is not an absolute https:// URL with 400, changing nothing', async () => {
    const companyId = await createCompanyThroughApi();
    const refused = { error: 'url must be an absolute https:// URL' };
    for (const url of [
      'http://crm.example.com/hook',
      'ftp://crm.example.com',
      'crm.example.com/hook',
      'https://',
      'https:///path',
      '',
    ]) {
      const res = await api().put(`/internal/companies/${companyId}/webhook`).set(auth).send({ url }).expect(400);
      expect(res.body, url).to.deep.equal(refused);
    }
    await api()
      .put(`/internal/companies/${companyId}/webhook`)
      .set(auth)
      .send({})
      .expect(400, { error: 'url is required' });
    const integration = await api().get(`/internal/companies/${companyId}/integration`).set(auth).expect(200);
    expect(integration.body).to.deep.equal(NO_INTEGRATION);
  });

  it('shows the integration with its keys and address', async () => {
    const companyId = await createCompanyThroughApi();
    const key = await generateKey(companyId);
    const integration = await api().get(`/internal/companies/${companyId}/integration`).set(auth).expect(200);
    expect(integration.body).to.deep.equal({
      active: true,
      webhookUrl: null,
      secret: null,
      previousSecretExpiresAt: null,
      webhookStatus: 'active',
      webhookDisabledReason: '',
      eventTypes: ['report.published'],
      keys: [{ id: key.id, prefix: key.prefix, createdAt: key.createdAt, lastUsedAt: null, mode: 'live' }],
    });
  });

  it('revokes the integration: every key refused by every process at once, address and secret gone', async () => {
    const companyId = await createCompanyThroughApi();
    const keys = [await generateKey(companyId), await generateKey(companyId)];
    await api()
      .put(`/internal/companies/${companyId}/webhook`)
      .set(auth)
      .send({ url: 'https://crm.example.com/h' })
      .expect(200);
    // A rotation in its overlap: the previous secret must go too.
    await api().post(`/internal/companies/${companyId}/webhook/secret`).set(auth).send({}).expect(200);
    const processA = newApp();
    const processB = newApp();
    try {
      for (const k of keys) await api(processB.app).get('/auth').set('X-API-KEY', k.key).expect(200);
      await api(processA.app).delete(`/internal/companies/${companyId}/integration`).set(auth).expect(204);
      for (const p of [processB, processA]) {
        for (const k of keys)
          await api(p.app).get('/auth').set('X-API-KEY', k.key).expect(400, { error: 'invalid API key' });
      }
    } finally {
      await Promise.all([processA.pool.end(), processB.pool.end()]);
    }
    const integration = await api().get(`/internal/companies/${companyId}/integration`).set(auth).expect(200);
    expect(integration.body).to.deep.equal(NO_INTEGRATION);
    const { rows } = await pool().query(
      'SELECT webhook_url, webhook_secret, previous_webhook_secret FROM integrations WHERE company_id = $1',
      [companyId],
    );
    expect(rows).to.deep.equal([{ webhook_url: null, webhook_secret: null, previous_webhook_secret: null }]);
  });

  it('starts a new integration after a revocation, and answers 204 when nothing is active', async () => {
    const companyId = await createCompanyThroughApi();
    await api().delete(`/internal/companies/${companyId}/integration`).set(auth).expect(204);
    await generateKey(companyId);
    await api().delete(`/internal/companies/${companyId}/integration`).set(auth).expect(204);
    const fresh = await generateKey(companyId);
    await api().get('/auth').set('X-API-KEY', fresh.key).expect(200);
    const integration = await api().get(`/internal/companies/${companyId}/integration`).set(auth).expect(200);
    expect(integration.body.active).to.equal(true);
    expect(integration.body.keys).to.have.length(1);
  });
});

describe('application API: reports', () => {
  it('creates a report in the application: 201, fromRestService and restId empty, status new', async () => {
    const companyId = await createCompanyThroughApi();
    await api()
      .post(`/internal/companies/${companyId}/users`)
      .set(auth)
      .send({ name: 'Dana', email: 'dana@example.com' })
      .expect(201);
    const res = await api()
      .post(`/internal/companies/${companyId}/reports`)
      .set(auth)
      .send(reportInput({ address: '12 Elm Street', inspectorEmails: 'DANA@example.com', invoiceItems: 'Fee: $1,250' }))
      .expect(201);
    expect(res.body).to.include({
      fromRestService: '',
      restId: '',
      status: 'new',
      address: '12 Elm Street',
      clientName: 'Jordan Smith',
      inspectorName: 'Dana',
      inspectorEmail: 'dana@example.com',
      publishedUrl: '',
    });
    expect(res.body.invoiceItems).to.deep.equal(['Fee: $1,250.00']);
  });

  it('does not accept restId or fromRestService on application reports', async () => {
    const companyId = await createCompanyThroughApi();
    await api()
      .post(`/internal/companies/${companyId}/reports`)
      .set(auth)
      .send(reportInput({ restId: 'crm-1' }))
      .expect(400, { error: 'unknown field: restId' });
    await api()
      .post(`/internal/companies/${companyId}/reports`)
      .set(auth)
      .send(reportInput({ fromRestService: 'CRM' }))
      .expect(400, { error: 'unknown field: fromRestService' });
    await api()
      .post(`/internal/companies/${companyId}/reports`)
      .set(auth)
      .send({ inspectionDate: '2026-03-14' })
      .expect(400, { error: 'clientNames is required' });
  });

  it('starts a report: new → in_progress, again in_progress, a published report is 409', async () => {
    const { companyId, key } = await newCompany();
    const {
      body: { id },
    } = await api().post('/reports/new').set('X-API-KEY', key).send(reportInput()).expect(200);
    const started = await api().post(`/internal/companies/${companyId}/reports/${id}/start`).set(auth).expect(200);
    expect(started.body).to.include({ id, status: 'in_progress' });
    const read = await api().get(`/reports/${id}`).set('X-API-KEY', key).expect(200);
    expect(read.body).to.deep.equal(started.body);
    const again = await api().post(`/internal/companies/${companyId}/reports/${id}/start`).set(auth).expect(200);
    expect(again.body).to.deep.equal(started.body);
    await api()
      .post(`/internal/companies/${companyId}/reports/${id}/publish`)
      .set(auth)
      .send({ publishedUrl: 'https://reports.example.com/r/1', notifyIntegration: false })
      .expect(200);
    await api()
      .post(`/internal/companies/${companyId}/reports/${id}/start`)
      .set(auth)
      .expect(409, { error: `report ${id} is published` });
  });

  it("answers 404 for an unknown, malformed or other company's report on start and publish", async () => {
    const mine = await newCompany();
    const other = await newCompany();
    const {
      body: { id },
    } = await api().post('/reports/new').set('X-API-KEY', other.key).send(reportInput()).expect(200);
    const publish = { publishedUrl: 'https://reports.example.com/r/1', notifyIntegration: false };
    for (const reportId of [id, MISSING_UUID, 'nope']) {
      await api()
        .post(`/internal/companies/${mine.companyId}/reports/${reportId}/start`)
        .set(auth)
        .expect(404, { error: `report ${reportId} not found` });
      await api()
        .post(`/internal/companies/${mine.companyId}/reports/${reportId}/publish`)
        .set(auth)
        .send(publish)
        .expect(404, { error: `report ${reportId} not found` });
    }
    const read = await api().get(`/reports/${id}`).set('X-API-KEY', other.key).expect(200);
    expect(read.body.status).to.equal('new');
  });

  it('publishes from new and re-publishes with a new publishedUrl', async () => {
    const { companyId, key } = await newCompany();
    const {
      body: { id },
    } = await api().post('/reports/new').set('X-API-KEY', key).send(reportInput()).expect(200);
    const first = await api()
      .post(`/internal/companies/${companyId}/reports/${id}/publish`)
      .set(auth)
      .send({ publishedUrl: 'https://reports.example.com/r/1', notifyIntegration: false })
      .expect(200);
    expect(first.body.report).to.include({ id, status: 'published', publishedUrl: 'https://reports.example.com/r/1' });
    expect(first.body.webhook).to.deep.equal({ outcome: 'not_sent', reason: 'not_requested' });
    const again = await api()
      .post(`/internal/companies/${companyId}/reports/${id}/publish`)
      .set(auth)
      .send({ publishedUrl: 'https://reports.example.com/r/2', notifyIntegration: false })
      .expect(200);
    expect(again.body.report.publishedUrl).to.equal('https://reports.example.com/r/2');
    const read = await api().get(`/reports/${id}`).set('X-API-KEY', key).expect(200);
    expect(read.body).to.deep.equal(again.body.report);
  });

  it('refuses an invalid publish body with 400 and changes nothing', async () => {
    const { companyId, key } = await newCompany();
    const {
      body: { id },
    } = await api().post('/reports/new').set('X-API-KEY', key).send(reportInput()).expect(200);
    const before = await api().get(`/reports/${id}`).set('X-API-KEY', key).expect(200);
    const url = `/internal/companies/${companyId}/reports/${id}/publish`;
    await api()
      .post(url)
      .set(auth)
      .send({ publishedUrl: 'https://r.example.com/1' })
      .expect(400, { error: 'notifyIntegration is required' });
    await api()
      .post(url)
      .set(auth)
      .send({ notifyIntegration: true })
      .expect(400, { error: 'publishedUrl is required' });
    await api()
      .post(url)
      .set(auth)
      .send({ publishedUrl: 'http://r.example.com/1', notifyIntegration: false })
      .expect(400, { error: 'publishedUrl must be an absolute https:// URL' });
    await api()
      .post(url)
      .set(auth)
      .send({ publishedUrl: 'https://r.example.com/1', notifyIntegration: 'yes' })
      .expect(400);
    await api()
      .post(url)
      .set(auth)
      .send({ publishedUrl: 'https://r.example.com/1', notifyIntegration: false, status: 'published' })
      .expect(400, { error: 'unknown field: status' });
    const after = await api().get(`/reports/${id}`).set('X-API-KEY', key).expect(200);
    expect(after.body).to.deep.equal(before.body);
  });

  it('refuses partner updates of a report once the application published it (409)', async () => {
    const { companyId, key } = await newCompany();
    const restId = unique('crm');
    const {
      body: { id },
    } = await api().post('/reports/new').set('X-API-KEY', key).send(reportInput({ restId })).expect(200);
    await api()
      .post(`/internal/companies/${companyId}/reports/${id}/publish`)
      .set(auth)
      .send({ publishedUrl: 'https://reports.example.com/r/1', notifyIntegration: true })
      .expect(200);
    await api()
      .post('/reports/new')
      .set('X-API-KEY', key)
      .send(reportInput({ restId, notes: 'late' }))
      .expect(409);
  });

  it('answers 400 for a delivery-log limit outside 1 to 100', async () => {
    const companyId = await createCompanyThroughApi();
    await api()
      .get(`/internal/companies/${companyId}/webhook-deliveries?limit=0`)
      .set(auth)
      .expect(400, { error: 'limit must be an integer from 1 to 100' });
    for (const limit of ['101', '1e1', '5.0', '+5', ' 5']) {
      await api()
        .get(`/internal/companies/${companyId}/webhook-deliveries?limit=${encodeURIComponent(limit)}`)
        .set(auth)
        .expect(400, { error: 'limit must be an integer from 1 to 100' });
    }
    await api().get(`/internal/companies/${companyId}/webhook-deliveries`).set(auth).expect(200, []);
  });
});
