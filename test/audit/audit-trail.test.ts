import { expect } from 'chai';
import { recordAudit, sweepAudit } from '../../src/audit/index.js';
import { api, newCompany, pool, reportInput, unique } from '../support/harness.js';
import { consoleClient, newPerson, PASSWORD, signInAs } from '../support/console.js';
import { withSandbox } from '../support/sandbox.js';
import { apiReport, auth, companyWithWebhook, webhookSuite } from '../support/webhooks.js';

/**
 * The audit trail through HTTP: every action of the list records who (the operator, a company's person,
 * a partner key by its prefix), what, on what, when and from where, in the company's trail, newest first;
 * the application API lists it with filters and pages; nothing changes an entry; retention sweeps it.
 */

interface Entry {
  id: string;
  at: string;
  actor: { type: string; name: string };
  action: string;
  subject: string;
  details: Record<string, string>;
  clientAddress: string;
}

const trailOf = async (companyId: string, query = ''): Promise<Entry[]> =>
  (await api().get(`/internal/companies/${companyId}/audit-events?limit=100${query}`).set(auth).expect(200))
    .body as Entry[];

/** The trail oldest first, as [actor, action, subject]. */
const story = (entries: Entry[]) => [...entries].reverse().map((e) => [e.actor.name, e.action, e.subject]);

describe('the audit trail', () => {
  const suite = webhookSuite();

  it("records the operator's actions through the application API, newest first, with the client address", async () => {
    const company = await companyWithWebhook(suite.receiver);
    const { companyId } = company;
    const base = `/internal/companies/${companyId}`;
    const app = suite.allowed.app;
    const { body: key } = await api(app).post(`${base}/api-keys`).set(auth).send({ mode: 'test' }).expect(201);
    await api(app).delete(`${base}/api-keys/${key.id}`).set(auth).expect(204);
    suite.receiver.on(company.path, { status: 204 });
    await api(app).post(`${base}/webhook/test`).set(auth).send({}).expect(200);
    await api(app).post(`${base}/webhook/secret`).set(auth).send({ overlapSeconds: 60 }).expect(200);
    const reportId = await apiReport(company.key);
    await api(app).post(`${base}/reports/${reportId}/start`).set(auth).expect(200);
    const published = await api(app)
      .post(`${base}/reports/${reportId}/publish`)
      .set(auth)
      .send({ publishedUrl: 'https://reports.example.com/1', notifyIntegration: true })
      .expect(200);
    const eventId = published.body.webhook.eventId as string;
    await api(app).post(`${base}/events/${eventId}/redeliver`).set(auth).expect(202);
    await api(app).post(`${base}/events/redeliver`).set(auth).send({ since: '2026-01-01T00:00:00Z' }).expect(202);
    const quiet = await api(app).post('/reports/new').set('X-API-KEY', company.key).send(reportInput()).expect(200);
    await api(app)
      .post(`${base}/reports/${quiet.body.id}/publish`)
      .set(auth)
      .send({ publishedUrl: 'https://reports.example.com/2', notifyIntegration: false })
      .expect(200);
    await api(app).delete(`${base}/integration`).set(auth).expect(204);

    const trail = await trailOf(companyId);
    expect(story(trail)).to.deep.equal([
      // companyWithWebhook's own address, saved before this test's actions.
      ['operator', 'webhook.saved', suite.receiver.url(company.path)],
      ['operator', 'key.generated', key.prefix],
      ['operator', 'key.revoked', key.prefix],
      ['operator', 'webhook.test_sent', trail.find((e) => e.action === 'webhook.test_sent')!.subject],
      ['operator', 'webhook.secret_rotated', ''],
      ['operator', 'report.started', reportId],
      ['operator', 'report.published', reportId],
      ['operator', 'event.redelivered', eventId],
      ['operator', 'events.recovered', ''],
      ['operator', 'report.published', quiet.body.id],
      ['operator', 'integration.revoked', ''],
      // The keys the integration still had, each recorded as revoked with it.
      ['operator', 'key.revoked', company.key.slice(0, 'irk_'.length + 8)],
    ]);
    const details = (action: string) => trail.filter((e) => e.action === action).map((e) => e.details);
    expect(details('key.generated')).to.deep.equal([{ mode: 'test' }]);
    expect(details('key.revoked')).to.deep.equal([{ mode: 'live', with: 'the integration' }, { mode: 'test' }]);
    expect(details('webhook.test_sent')[0]).to.include({ world: 'live', outcome: 'HTTP 204' });
    expect(details('webhook.secret_rotated')).to.deep.equal([{ world: 'live', overlapSeconds: '60' }]);
    expect(details('report.published')).to.deep.equal([
      { world: 'live', notification: 'not notified' },
      { world: 'live', notification: 'notified' },
    ]);
    expect(details('events.recovered')).to.deep.equal([{ since: '2026-01-01T00:00:00.000Z', queued: '0' }]);
    for (const entry of trail) {
      expect(entry.actor.type).to.equal('operator');
      expect(entry.clientAddress).to.match(/127\.0\.0\.1$/);
      expect(Date.parse(entry.at)).to.be.closeTo(Date.now(), 120_000);
    }
    expect(trail.map((e) => Number(e.id))).to.deep.equal(trail.map((e) => Number(e.id)).sort((a, b) => b - a));
  });

  it("records a partner key's actions by its prefix, in the trail of the company that owns the key", async () => {
    const company = await withSandbox([{ name: 'Dana Inspector', email: 'dana@example.com' }]);
    const { body: report } = await api()
      .post('/reports/new')
      .set('X-API-KEY', company.testKey)
      .send(reportInput({ inspectorEmails: 'dana@example.com' }))
      .expect(200);
    await api().post(`/sandbox/reports/${report.id}/start`).set('X-API-KEY', company.testKey).expect(200);
    await api()
      .post(`/sandbox/reports/${report.id}/publish`)
      .set('X-API-KEY', company.testKey)
      .send({ notifyIntegration: false })
      .expect(200);
    const trail = (await trailOf(company.companyId)).filter((e) => e.actor.type === 'key');
    const prefix = company.testKey.slice(0, 'irk_test_'.length + 8);
    expect(story(trail)).to.deep.equal([
      [prefix, 'report.started', report.id],
      [prefix, 'report.published', report.id],
    ]);
    expect(trail.map((e) => e.details)).to.deep.equal([
      { world: 'test', notification: 'not notified' },
      { world: 'test' },
    ]);
  });

  it("records a company's people: invitations, roles, removal and sign-ins, under their e-mail", async () => {
    const { companyId } = await newCompany([{ name: 'Dana Inspector', email: `${unique('dana')}@example.com` }]);
    const admin = await newPerson(companyId, 'admin');
    const session = await signInAs(admin.email);
    await consoleClient()
      .post('/console/sign-in')
      .type('form')
      .send({ email: admin.email, password: `${PASSWORD}!` })
      .expect(401);
    const console = (path: string, form: Record<string, string>) =>
      consoleClient()
        .post(`/console/companies/${companyId}${path}`)
        .set('Cookie', session.cookie)
        .type('form')
        .send({ _csrf: session.csrf, ...form });
    const invited = `${unique('ins')}@example.com`;
    await console('/users/invitations', { email: invited, role: 'inspector' }).expect(303);
    const inspector = await newPerson(companyId, 'inspector');
    const { rows } = await pool().query<{ id: string }>('SELECT id FROM users WHERE company_id = $1 AND email = $2', [
      companyId,
      inspector.email,
    ]);
    await console(`/users/${rows[0]!.id}/role`, { role: 'admin' }).expect(303);
    await console(`/users/${rows[0]!.id}/remove`, {}).expect(303);
    await console('/integrations/rest-api/webhook', {
      url: 'https://hooks.example.com/audit',
      eventTypes: 'report.published',
    }).expect(303);
    await console('/integrations/rest-api/webhook/secret/reveal', {}).expect(303);

    const trail = await trailOf(companyId);
    expect(story(trail)).to.deep.equal([
      // The invitations newPerson made, by the operator.
      ['operator', 'user.invited', admin.email],
      [admin.email, 'sign_in.succeeded', ''],
      [admin.email, 'sign_in.failed', ''],
      [admin.email, 'user.invited', invited],
      ['operator', 'user.invited', inspector.email],
      [admin.email, 'user.role_changed', inspector.email],
      [admin.email, 'user.removed', inspector.email],
      [admin.email, 'webhook.saved', 'https://hooks.example.com/audit'],
      [admin.email, 'webhook.secret_revealed', ''],
    ]);
    const details = (action: string) => trail.filter((e) => e.action === action).map((e) => e.details);
    expect(details('user.invited')).to.deep.include({ role: 'inspector' });
    expect(details('user.role_changed')).to.deep.equal([{ role: 'admin' }]);
    expect(details('webhook.saved')).to.deep.equal([{ world: 'live', eventTypes: 'report.published' }]);
    expect(new Set(trail.filter((e) => e.actor.name === admin.email).map((e) => e.actor.type))).to.deep.equal(
      new Set(['person']),
    );
  });

  it('lists the trail filtered by who and by action, a page at a time with Link, and refuses bad queries', async () => {
    const { companyId } = await newCompany();
    const base = `/internal/companies/${companyId}`;
    for (let i = 0; i < 3; i++) await api().post(`${base}/api-keys`).set(auth).send({}).expect(201);
    await api().put(`${base}/webhook`).set(auth).send({ url: 'https://hooks.example.com/a' }).expect(200);
    const first = await api().get(`${base}/audit-events?limit=2&action=key.generated`).set(auth).expect(200);
    expect(first.body.map((e: Entry) => e.action)).to.deep.equal(['key.generated', 'key.generated']);
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.link as string)![1]!;
    expect(next).to.include('action=key.generated');
    const second = await api().get(next).set(auth).expect(200);
    expect(second.body.map((e: Entry) => e.action)).to.deep.equal(['key.generated']);
    expect(second.headers.link).to.equal(undefined);
    expect(Number(second.body[0].id)).to.be.below(Number(first.body[1].id));
    expect((await trailOf(companyId, '&actor=operator')).length).to.equal(4);
    expect(await trailOf(companyId, '&actor=someone%40example.com')).to.deep.equal([]);

    for (const query of ['before=0', 'before=abc', 'action=key.made', 'limit=0', 'actor=']) {
      const res = await api().get(`${base}/audit-events?${query}`).set(auth).expect(400);
      expect(res.body.error, query).to.be.a('string');
    }
    await api()
      .get(`/internal/companies/${(await newCompany()).companyId}/audit-events`)
      .expect(401);
    await api().get('/internal/companies/00000000-0000-4000-8000-000000000000/audit-events').set(auth).expect(404);
  });

  it('never changes an entry, and forgets entries only past the retention', async () => {
    const { companyId } = await newCompany();
    await api().post(`/internal/companies/${companyId}/api-keys`).set(auth).send({}).expect(201);
    const [entry] = await trailOf(companyId);
    let refused: unknown;
    await pool()
      .query("UPDATE audit_events SET actor = 'someone else' WHERE company_id = $1", [companyId])
      .catch((err: unknown) => (refused = err));
    expect(String(refused)).to.include('the audit trail is append-only');
    expect(await trailOf(companyId)).to.deep.equal([entry]);
    // Not past an hour's retention; past a millisecond's.
    await sweepAudit(pool(), 3_600_000);
    expect(await trailOf(companyId)).to.have.length(1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await sweepAudit(pool(), 1);
    expect(await trailOf(companyId)).to.deep.equal([]);
  });

  it("shows the console's Audit trail page to the company's admins, filtered and a page at a time", async () => {
    const { companyId } = await newCompany();
    const admin = await newPerson(companyId, 'admin');
    const by = { actor: { type: 'key', prefix: 'irk_abcdefgh' } as const, clientAddress: '203.0.113.7', companyId };
    for (let i = 0; i < 51; i++) await recordAudit(pool(), by, { action: 'event.redelivered', subject: `msg_${i}` });
    const session = await signInAs(admin.email);
    const page = (query = '') =>
      consoleClient().get(`/console/companies/${companyId}/audit${query}`).set('Cookie', session.cookie).expect(200);
    const first = (await page()).text;
    expect(first).to.include('msg_50').and.include('203.0.113.7').and.not.include('>msg_0<');
    const older = /href="([^"]*before=[0-9]+)"/.exec(first)![1]!.replaceAll('&amp;', '&');
    const second = (await consoleClient().get(older).set('Cookie', session.cookie).expect(200)).text;
    expect(second).to.include('>msg_0<').and.include('No older entries.').and.include('Newest entries');
    const filtered = (await page(`?actor=${encodeURIComponent(admin.email)}`)).text;
    expect(filtered).to.include('Signed in').and.not.include('msg_');
    const byAction = (await page('?action=sign_in.succeeded')).text;
    expect(byAction).to.include('Signed in').and.not.include('msg_');
    // A malformed filter or page is none: the first page.
    expect((await page('?before=abc&action=nothing')).text).to.include('msg_50');
  });

  it('keeps revoked keys listed on the REST API page, with who revoked them and when', async () => {
    const { companyId } = await newCompany();
    const admin = await newPerson(companyId, 'admin');
    const { body: key } = await api().post(`/internal/companies/${companyId}/api-keys`).set(auth).send({}).expect(201);
    const session = await signInAs(admin.email);
    await consoleClient()
      .post(`/console/companies/${companyId}/integrations/rest-api/api-keys/${key.id}/revoke`)
      .set('Cookie', session.cookie)
      .type('form')
      .send({ _csrf: session.csrf })
      .expect(303);
    const page = await consoleClient()
      .get(`/console/companies/${companyId}/integrations/rest-api`)
      .set('Cookie', session.cookie)
      .expect(200);
    const revoked = page.text.slice(page.text.indexOf('Revoked keys'));
    expect(revoked).to.include(`<code>${key.prefix}…</code>`).and.include(admin.email);
  });
});
