import { expect } from 'chai';
import { expireSandboxReports, SANDBOX_MAX_REPORTS } from '../../src/reports/sandbox.js';
import { api, pool, reportInput, unique } from '../support/harness.js';
import { gate, until } from '../support/wait.js';
import { create, fillSandbox, sandboxReports, withSandbox } from '../support/sandbox.js';
import { auth, verifies, webhookSuite } from '../support/webhooks.js';

/** The sandbox: test keys, a world of their own, the inspector's part on demand. */

describe('the sandbox: test keys and their world', () => {
  it('issues test keys beside live ones: listed with their mode, each answer saying its world', async () => {
    const company = await withSandbox();
    const { body: keys } = await api().get(`/internal/companies/${company.companyId}/api-keys`).set(auth).expect(200);
    expect(keys.map((k: { mode: string }) => k.mode).sort()).to.deep.equal(['live', 'test']);
    const live = await api().get('/auth').set('X-API-KEY', company.key).expect(200);
    const test = await api().get('/auth').set('X-API-KEY', company.testKey).expect(200);
    expect(live.headers['intake-mode']).to.equal('live');
    expect(test.headers['intake-mode']).to.equal('test');
    await api().post(`/internal/companies/${company.companyId}/api-keys`).set(auth).send({ mode: 'live' }).expect(201);
  });

  it('keeps the worlds apart on every partner operation, both ways; a restId once in each', async () => {
    const company = await withSandbox();
    const restId = unique('crm');
    const live = await create(company.key, reportInput({ restId, notes: 'live' })).expect(200);
    const test = await create(company.testKey, reportInput({ restId, notes: 'test' })).expect(200);
    expect(test.body.id).to.not.equal(live.body.id);
    await api().get(`/reports/${live.body.id}`).set('X-API-KEY', company.testKey).expect(404);
    await api().get(`/reports/${test.body.id}`).set('X-API-KEY', company.key).expect(404);
    for (const [key, id, notes] of [
      [company.key, live.body.id, 'live'],
      [company.testKey, test.body.id, 'test'],
    ] as const) {
      const { body: list } = await api().get('/reports').set('X-API-KEY', key).expect(200);
      expect(list.map((r: { id: string }) => r.id)).to.deep.equal([id]);
      const byRestId = await api()
        .get(`/reports?restId=${encodeURIComponent(restId)}`)
        .set('X-API-KEY', key);
      expect(byRestId.body.map((r: { inspectorNotes: string }) => r.inspectorNotes)).to.deep.equal([notes]);
    }
    // The application's inbox shows the live report only.
    const { body: inbox } = await api().get(`/internal/companies/${company.companyId}/reports`).set(auth).expect(200);
    expect(inbox.map((r: { id: string }) => r.id)).to.deep.equal([live.body.id]);
    await api().get(`/internal/companies/${company.companyId}/reports/${test.body.id}`).set(auth).expect(404);
    // An update by restId stays in its world.
    await create(company.testKey, reportInput({ restId, notes: 'test 2' })).expect(200);
    const { body: liveReport } = await api().get(`/reports/${live.body.id}`).set('X-API-KEY', company.key);
    expect(liveReport.inspectorNotes).to.equal('live');
  });

  it("matches a sandbox report's inspectors to the company's users", async () => {
    const company = await withSandbox([{ name: 'Dana Inspector', email: 'dana@example.com' }]);
    const { body } = await create(company.testKey, reportInput({ inspectorEmails: 'dana@example.com' })).expect(200);
    const { body: report } = await api().get(`/reports/${body.id}`).set('X-API-KEY', company.testKey).expect(200);
    expect(report.inspectorName).to.equal('Dana Inspector');
  });

  it('answers 403 naming the test key to a live key on every sandbox operation', async () => {
    const company = await withSandbox();
    const { body } = await create(company.key, reportInput()).expect(200);
    for (const req of [
      api().post(`/sandbox/reports/${body.id}/start`),
      api().post(`/sandbox/reports/${body.id}/publish`).send({ notifyIntegration: false }),
      api().delete('/sandbox/reports'),
    ]) {
      const res = await req.set('X-API-KEY', company.key).expect(403);
      expect(res.body.error).to.match(/need a test key \(irk_test_…\)/);
    }
    const { body: report } = await api().get(`/reports/${body.id}`).set('X-API-KEY', company.key).expect(200);
    expect(report.status).to.equal('new');
  });

  it('starts a sandbox report, and answers 404 for a live report or an unknown id', async () => {
    const company = await withSandbox();
    const { body } = await create(company.testKey, reportInput()).expect(200);
    const started = await api().post(`/sandbox/reports/${body.id}/start`).set('X-API-KEY', company.testKey).expect(200);
    expect(started.body).to.include({ id: body.id, status: 'in_progress' });
    const live = await create(company.key, reportInput()).expect(200);
    await api().post(`/sandbox/reports/${live.body.id}/start`).set('X-API-KEY', company.testKey).expect(404);
    await api().post('/sandbox/reports/not-an-id/start').set('X-API-KEY', company.testKey).expect(404);
  });

  it('answers 409 naming the sandbox for a test delivery or rotation before its address is set', async () => {
    const company = await withSandbox();
    for (const path of ['sandbox/webhook/test', 'sandbox/webhook/secret']) {
      const res = await api().post(`/internal/companies/${company.companyId}/${path}`).set(auth).send({}).expect(409);
      expect(res.body.error).to.equal('no webhook address is set for the sandbox: set one first');
    }
  });

  it('wipes the sandbox in one call and leaves the live reports', async () => {
    const company = await withSandbox();
    await create(company.testKey, reportInput()).expect(200);
    await create(company.testKey, reportInput()).expect(200);
    const live = await create(company.key, reportInput()).expect(200);
    await api().delete('/sandbox/reports').set('X-API-KEY', company.testKey).expect(204);
    expect((await api().get('/reports').set('X-API-KEY', company.testKey).expect(200)).body).to.deep.equal([]);
    const { body: list } = await api().get('/reports').set('X-API-KEY', company.key).expect(200);
    expect(list.map((r: { id: string }) => r.id)).to.deep.equal([live.body.id]);
  });

  it('holds at most 10,000 reports: a create past it is refused, an update of one of them is not', async function () {
    this.timeout(30_000);
    const company = await withSandbox();
    const restId = unique('crm');
    await create(company.testKey, reportInput({ restId })).expect(200);
    await fillSandbox(company, 9_999);
    const refused = await create(company.testKey, reportInput()).expect(409);
    expect(refused.body.error).to.match(/^the sandbox holds 10,000 reports, its most/);
    await create(company.testKey, reportInput({ restId, notes: 'still updatable' })).expect(200);
    await create(company.key, reportInput()).expect(200);
    expect(await sandboxReports(company)).to.equal(SANDBOX_MAX_REPORTS);
  });

  it("answers an Idempotency-Key what it kept before the bound: a full sandbox's retry gets its report, another body 422", async function () {
    this.timeout(30_000);
    const company = await withSandbox();
    await fillSandbox(company, 9_999);
    const key = unique('key');
    const made = await create(company.testKey, reportInput({ notes: 'the last one' })).set('Idempotency-Key', key);
    expect(made.status).to.equal(200);
    await create(company.testKey, reportInput()).expect(409);
    const again = await create(company.testKey, reportInput({ notes: 'the last one' })).set('Idempotency-Key', key);
    expect([again.status, again.text]).to.deep.equal([200, made.text]);
    const other = await create(company.testKey, reportInput({ notes: 'another' })).set('Idempotency-Key', key);
    expect(other.status).to.equal(422);
    expect(await sandboxReports(company)).to.equal(SANDBOX_MAX_REPORTS);
  });

  it('keeps no refusal of a full sandbox for an Idempotency-Key: once wiped, the retry with the key is written', async function () {
    this.timeout(30_000);
    const company = await withSandbox();
    await fillSandbox(company, SANDBOX_MAX_REPORTS);
    const key = unique('key');
    const input = reportInput({ notes: 'waits for room' });
    const full = await create(company.testKey, input).set('Idempotency-Key', key);
    expect(full.status).to.equal(409);
    expect(full.body.error).to.match(/^the sandbox holds 10,000 reports/);
    await api().delete('/sandbox/reports').set('X-API-KEY', company.testKey).expect(204);
    const written = await create(company.testKey, input).set('Idempotency-Key', key);
    expect(written.status).to.equal(200);
    expect(await sandboxReports(company)).to.equal(1);
  });

  it("holds the bound where the database refuses a statement past it: the constraint's and the code's", async () => {
    const { rows } = await pool().query<{ def: string }>(
      "SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'companies_sandbox_room'",
    );
    expect(rows.map((r) => r.def)).to.deep.equal([`CHECK ((sandbox_reports <= ${SANDBOX_MAX_REPORTS}))`]);
  });

  it('lets sandbox reports older than 30 days go, and no live report', async () => {
    const company = await withSandbox();
    const test = await create(company.testKey, reportInput()).expect(200);
    const live = await create(company.key, reportInput()).expect(200);
    await pool().query("UPDATE reports SET created_at = clock_timestamp() - interval '31 days' WHERE id = ANY($1)", [
      [test.body.id, live.body.id],
    ]);
    expect(await expireSandboxReports(pool())).to.be.greaterThan(0);
    await api().get(`/reports/${test.body.id}`).set('X-API-KEY', company.testKey).expect(404);
    await api().get(`/reports/${live.body.id}`).set('X-API-KEY', company.key).expect(200);
  });

  it("revokes the sandbox's keys with the integration, on the very next request", async () => {
    const company = await withSandbox();
    await api().get('/auth').set('X-API-KEY', company.testKey).expect(200);
    await api().delete(`/internal/companies/${company.companyId}/integration`).set(auth).expect(204);
    const refused = await api().get('/auth').set('X-API-KEY', company.testKey).expect(400);
    expect(refused.body.error).to.equal('invalid API key');
    await api().get('/auth').set('X-API-KEY', company.key).expect(400);
  });
});

describe('the sandbox publish and its webhook', () => {
  const suite = webhookSuite();

  async function sandboxWithWebhook() {
    const company = await withSandbox();
    const livePath = `/${unique('live')}`;
    const testPath = `/${unique('test')}`;
    const live = await api()
      .put(`/internal/companies/${company.companyId}/webhook`)
      .set(auth)
      .send({ url: suite.receiver.url(livePath) })
      .expect(200);
    const test = await api()
      .put(`/internal/companies/${company.companyId}/sandbox/webhook`)
      .set(auth)
      .send({ url: suite.receiver.url(testPath) })
      .expect(200);
    return { ...company, livePath, testPath, liveSecret: live.body.secret, testSecret: test.body.secret };
  }

  const publish = (key: string, id: string, body: object) =>
    api(suite.allowed.app).post(`/sandbox/reports/${id}/publish`).set('X-API-KEY', key).send(body);

  it("sends the reportPublished webhook to the sandbox's address, signed with its secret only", async () => {
    const company = await sandboxWithWebhook();
    const { body } = await create(company.testKey, reportInput({ restId: unique('crm') })).expect(200);
    const res = await publish(company.testKey, body.id, { notifyIntegration: true }).expect(200);
    expect(res.body.webhook).to.include({ outcome: 'sent', status: 204 });
    expect(res.body.report).to.include({ id: body.id, status: 'published' });
    expect(res.body.report.publishedUrl).to.match(/^https:\/\//);
    const [request, ...more] = suite.receiver.at(company.testPath);
    expect(more).to.have.length(0);
    expect(verifies(request!, company.testSecret)).to.equal(true);
    expect(verifies(request!, company.liveSecret)).to.equal(false);
    expect(suite.receiver.at(company.livePath)).to.have.length(0);
    expect(JSON.parse(request!.body)).to.deep.equal(res.body.report);
  });

  it("answers a receiver's failure as an inspector's publish shows it: 502, the report unpublished", async () => {
    const company = await sandboxWithWebhook();
    suite.receiver.on(company.testPath, { status: 500 });
    const { body } = await create(company.testKey, reportInput()).expect(200);
    const res = await publish(company.testKey, body.id, {
      notifyIntegration: true,
      publishedUrl: 'https://reports.example.com/sandbox/1',
    }).expect(502);
    expect(res.body.error).to.match(/^webhook delivery failed/);
    const { body: report } = await api().get(`/reports/${body.id}`).set('X-API-KEY', company.testKey).expect(200);
    expect(report.status).to.not.equal('published');
  });

  it('answers a publish whose sandbox was wiped during its delivery as sent, saying the report is gone', async () => {
    const company = await sandboxWithWebhook();
    const { body } = await create(company.testKey, reportInput()).expect(200);
    const receiverAnswers = gate();
    suite.receiver.on(company.testPath, { status: 204, waitFor: () => receiverAnswers.opened });
    const publishing = publish(company.testKey, body.id, { notifyIntegration: true }).then((res) => res);
    try {
      await until(() => suite.receiver.at(company.testPath).length === 1, 'delivered');
      await api().delete('/sandbox/reports').set('X-API-KEY', company.testKey).expect(204);
    } finally {
      receiverAnswers.open();
    }
    const res = await publishing;
    expect(res.status).to.equal(200);
    expect(res.body.reportDeleted).to.equal(true);
    expect(res.body.webhook).to.include({ outcome: 'sent', status: 204 });
    expect(res.body.report).to.include({ id: body.id, status: 'published' });
    expect(JSON.parse(suite.receiver.at(company.testPath)[0]!.body)).to.deep.equal(res.body.report);
    await api().get(`/reports/${body.id}`).set('X-API-KEY', company.testKey).expect(404);
  });

  it("test-delivers and rotates the sandbox's secret apart from the live one", async () => {
    const company = await sandboxWithWebhook();
    const tested = await api(suite.allowed.app)
      .post(`/internal/companies/${company.companyId}/sandbox/webhook/test`)
      .set(auth)
      .expect(200);
    expect(tested.body).to.include({ outcome: 'sent' });
    const rotated = await api()
      .post(`/internal/companies/${company.companyId}/sandbox/webhook/secret`)
      .set(auth)
      .send({})
      .expect(200);
    expect(rotated.body.secret).to.not.equal(company.testSecret);
    // The sandbox's test delivery went to its own address only.
    expect(suite.receiver.at(company.testPath)).to.have.length(1);
    expect(suite.receiver.at(company.livePath)).to.have.length(0);
  });
});
