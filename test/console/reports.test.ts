import { expect } from 'chai';
import type { Express } from 'express';
import { api, newCompany, pool, reportInput, unique } from '../support/harness.js';
import { consoleClient, signIn } from '../support/console.js';
import { apiReport, auth, companyWithWebhook, verifies, webhookSuite } from '../support/webhooks.js';

const QUESTION = '<legend>Notify the integration?</legend>';
const PUBLISHED_AT = 'https://reports.example.com/r/1';
/** What the publish form of an unpublished report's page carries besides the address. */
const UNPUBLISHED = { publishedAt: '' };

/** The hidden fields of the page's publishing form (preact writes an empty value as a bare `value`). */
function publishForm(html: string): Record<string, string> {
  const form = /<form method="post" action="[^"]+\/publish"[^>]*>([\s\S]*?)<\/form>/.exec(html);
  if (!form) throw new Error('the page has no publish form');
  const fields: Record<string, string> = {};
  for (const m of form[1]!.matchAll(/<input type="hidden" name="([^"]+)" value(?:="([^"]*)")?\/>/g))
    fields[m[1]!] = (m[2] ?? '').replace(/&amp;/g, '&');
  return fields;
}

/** A report made in the application (no webhook rules apply to it). */
async function appReport(companyId: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await api()
    .post(`/internal/companies/${companyId}/reports`)
    .set(auth)
    .send(reportInput(overrides))
    .expect(201);
  return res.body.id;
}

async function statusOf(reportId: string): Promise<{ status: string; published_url: string | null }> {
  const { rows } = await pool().query<{ status: string; published_url: string | null }>(
    'SELECT status, published_url FROM reports WHERE id = $1',
    [reportId],
  );
  return rows[0]!;
}

/** A console session on an app, and its requests. */
async function session(target: Express) {
  const { cookie, csrf } = await signIn(target);
  return {
    get: (path: string) => consoleClient(target).get(path).set('Cookie', cookie),
    post: (path: string, fields: Record<string, string>, token: string | null = csrf) =>
      consoleClient(target)
        .post(path)
        .set('Cookie', cookie)
        .type('form')
        .send(token === null ? fields : { _csrf: token, ...fields }),
    /** A form's action answered 303 (Post/Redirect/Get), and the page its redirect names. */
    async postThenGet(path: string, fields: Record<string, string>) {
      const posted = await this.post(path, fields).expect(303);
      return this.get(posted.headers.location!).expect(200);
    },
  };
}

/** The inbox's rows: each one's report id and its text. */
function rowsOf(html: string): { id: string; html: string }[] {
  return [
    ...html.matchAll(/<tr><td><a href="\/console\/companies\/[0-9a-f-]+\/reports\/([0-9a-f-]{36})">[\s\S]*?<\/tr>/g),
  ].map((m) => ({ id: m[1]!, html: m[0] }));
}

describe('console: the reports inbox and publishing', () => {
  const suite = webhookSuite();
  let console_: Awaited<ReturnType<typeof session>>;
  before(async () => {
    console_ = await session(suite.allowed.app);
  });

  it('lists the company’s reports newest first, a page at a time ("Older reports"), each once', async () => {
    const { companyId } = await newCompany();
    const made: string[] = [];
    for (let i = 0; i < 23; i++)
      made.push(await appReport(companyId, { inspectionDate: `2025-01-${String(i + 1).padStart(2, '0')}` }));
    const base = `/console/companies/${companyId}/reports`;
    const seen: string[] = [];
    let url: string | undefined = base;
    while (url) {
      const page: { text: string } = await console_.get(url).expect(200);
      expect(page.text).to.include('<h1>Reports</h1>');
      const ids = rowsOf(page.text).map((r) => r.id);
      expect(ids.length).to.be.within(1, 20);
      seen.push(...ids);
      url = /href="([^"]+)">Older reports</.exec(page.text)?.[1]?.replace(/&amp;/g, '&');
    }
    expect(seen).to.deep.equal([...made].reverse());
    await console_.get(`${base}?after=forged`).expect(400);
  });

  it('pages the inbox both ways, says when more follow, and filters by status and by inspector', async () => {
    const inspector = { name: 'Pat Paged', email: `${unique('pat')}@example.com` };
    const { companyId, key } = await newCompany([inspector]);
    const made: string[] = [];
    for (let i = 0; i < 25; i++)
      made.push(await appReport(companyId, { inspectionDate: `2024-02-${String(i + 1).padStart(2, '0')}` }));
    const mine = (
      await api()
        .post('/reports/new')
        .set('X-API-KEY', key)
        .send(reportInput({ inspectorEmails: inspector.email, inspectionDate: '2024-01-01' }))
        .expect(200)
    ).body.id as string;
    await api().post(`/internal/companies/${companyId}/reports/${made[0]}/start`).set(auth).expect(200);
    const base = `/console/companies/${companyId}/reports`;
    const link = (html: string, name: string) =>
      new RegExp(`href="([^"]+)">${name}</a>`).exec(html)?.[1]?.replace(/&amp;/g, '&');

    const first = (await console_.get(base).expect(200)).text;
    expect(first).to.include('More reports follow on older pages.');
    expect(link(first, 'Newer reports')).to.equal(undefined);
    expect(first).to.include(`<li><a href="/console/companies/${companyId}">`);
    const second = (await console_.get(link(first, 'Older reports')!).expect(200)).text;
    expect(rowsOf(second).map((r) => r.id)).to.deep.equal([...made.slice(0, 5)].reverse().concat(mine));
    expect(second).to.include('These are the oldest reports.');
    expect(link(second, 'Older reports')).to.equal(undefined);
    const back = (await console_.get(link(second, 'Newer reports')!).expect(200)).text;
    expect(rowsOf(back).map((r) => r.id)).to.deep.equal(rowsOf(first).map((r) => r.id));

    const started = (await console_.get(`${base}?status=in_progress`).expect(200)).text;
    expect(rowsOf(started).map((r) => r.id)).to.deep.equal([made[0]]);
    expect(started).to.include('<option value="in_progress" selected>In progress</option>');
    const theirs = (await console_.get(`${base}?inspector=${encodeURIComponent(inspector.email)}`).expect(200)).text;
    expect(rowsOf(theirs).map((r) => r.id)).to.deep.equal([mine]);
    expect(theirs).to.include('<label for="filter-inspector">Inspector</label>');
    for (const bad of ['status=done', 'status=new&status=published', 'after=forged', 'before=forged'])
      expect((await console_.get(`${base}?${bad}`).expect(400)).text).to.include('<h1>Bad request</h1>');
  });

  it('shows the "New from REST API" badge only on API reports still new, with source and restId', async () => {
    const { companyId, key } = await newCompany();
    const restId = unique('crm');
    const fresh = (
      await api()
        .post('/reports/new')
        .set('X-API-KEY', key)
        .send(reportInput({ restId, fromRestService: 'Acme CRM', inspectionDate: '2026-01-03' }))
        .expect(200)
    ).body.id as string;
    const started = await apiReport(key);
    await api().post(`/internal/companies/${companyId}/reports/${started}/start`).set(auth).expect(200);
    const own = await appReport(companyId, { inspectionDate: '2026-01-01' });
    const rows = rowsOf((await console_.get(`/console/companies/${companyId}/reports`).expect(200)).text);
    const row = (id: string) => rows.find((r) => r.id === id)!.html;
    expect(row(fresh)).to.include('<span class="badge">New from REST API</span>');
    expect(row(fresh)).to.include('<td>Acme CRM</td>').and.to.include(`<td>${restId}</td>`);
    expect(row(fresh)).to.include('<td>2026-01-03</td>');
    expect(row(started)).not.to.include('New from REST API');
    expect(row(own)).not.to.include('New from REST API');
    expect(row(own)).to.include('<td></td>');
  });

  it('bounds long partner values on the inbox; the report’s page shows them whole, as text', async () => {
    const { companyId, key } = await newCompany();
    const notes = `${'n'.repeat(20_000)}<script>alert(1)</script>`;
    const address = `${'a'.repeat(300)}"><img src=x onerror=alert(1)>`;
    const id = (
      await api()
        .post('/reports/new')
        .set('X-API-KEY', key)
        .send(reportInput({ notes, address, restId: 'r'.repeat(200), agentName: 'javascript:alert(1)' }))
        .expect(200)
    ).body.id as string;
    const inbox = await console_.get(`/console/companies/${companyId}/reports`).expect(200);
    expect(inbox.text).to.include(`>${'a'.repeat(80)}…</a>`);
    expect(inbox.text).not.to.include('a'.repeat(81));
    expect(inbox.text).not.to.include('r'.repeat(81));
    const page = await console_.get(`/console/companies/${companyId}/reports/${id}`).expect(200);
    expect(page.text).to.include('<h1>Report</h1>');
    expect(page.text).to.include(`<dd>${'n'.repeat(20_000)}&lt;script>alert(1)&lt;/script></dd>`);
    expect(page.text).to.include(`<dd>${'a'.repeat(300)}&quot;>&lt;img src=x onerror=alert(1)></dd>`);
    expect(page.text).to.include('<dd>javascript:alert(1)</dd>');
    expect(page.text).not.to.include('href="javascript');
  });

  it('"Start" moves a new report to in progress (303 to its page); without the CSRF token: 403, unchanged', async () => {
    const { companyId, key } = await newCompany();
    const id = await apiReport(key);
    const path = `/console/companies/${companyId}/reports/${id}`;
    expect((await console_.get(path).expect(200)).text).to.include('<button type="submit">Start</button>');
    await console_.post(`${path}/start`, {}, null).expect(403);
    expect((await statusOf(id)).status).to.equal('new');
    await console_.post(`${path}/start`, {}).expect(303).expect('Location', path);
    expect((await statusOf(id)).status).to.equal('in_progress');
    // The outcome is the session's flash: shown once, by the page the redirect names, then gone.
    expect((await console_.get(path).expect(200)).text).to.include('<p>Started.</p>');
    expect((await console_.get(path).expect(200)).text).not.to.include('Started.');
  });

  it('shows no outcome from a crafted link: the page reads none from its query, only the session’s flash', async () => {
    const { companyId, key } = await newCompany();
    const id = await apiReport(key);
    const path = `/console/companies/${companyId}/reports/${id}`;
    const forged = [
      'outcome=sent&status=200',
      'outcome=not_sent&reason=not_requested',
      'outcome=retrying&next=2030-01-01T00:00:00Z',
      'outcome=failed',
      'outcome=started',
      'outcome=recovered&queued=999999999',
    ];
    for (const query of forged) {
      const page = await console_.get(`${path}?${query}`).expect(200);
      expect(page.text, query).to.include('<div role="status" class="outcome" id="outcome" tabindex="-1"></div>');
      expect(page.text, query).not.to.match(/Published;|Started\.|queued/);
    }
    expect((await statusOf(id)).status).to.equal('new');
  });

  it('publishes at once, without the question, when the webhook rules do not apply', async () => {
    const { companyId, key } = await newCompany();
    // A report made in the application, and an API report of a company with no webhook address.
    for (const id of [await appReport(companyId), await apiReport(key)]) {
      const path = `/console/companies/${companyId}/reports/${id}`;
      const res = await console_.post(`${path}/publish`, { ...UNPUBLISHED, publishedUrl: PUBLISHED_AT }).expect(303);
      expect(res.text).not.to.include(QUESTION);
      expect(await statusOf(id)).to.deep.equal({ status: 'published', published_url: PUBLISHED_AT });
      expect(res.headers.location).to.equal(path);
      const page = await console_.get(path).expect(200);
      expect(page.text).to.match(/<div role="status"[^>]*autofocus><p>Published; .*\(outcome not_sent\)\.<\/p><\/div>/);
    }
  });

  it('asks "Notify the integration?" when they apply; "Notify" sends the signed webhook, then publishes', async () => {
    const company = await companyWithWebhook(suite.receiver);
    const id = await apiReport(company.key);
    const path = `/console/companies/${company.companyId}/reports/${id}`;
    const asked = await console_.postThenGet(`${path}/publish`, { ...UNPUBLISHED, publishedUrl: PUBLISHED_AT });
    expect(asked.text).to.include(QUESTION);
    expect(asked.text).to.include('<fieldset id="publish-step" tabindex="-1" autofocus>');
    // Shown once: a reload shows the publish form again, and sends nothing.
    expect((await console_.get(path).expect(200)).text).not.to.include(QUESTION);
    expect(asked.text).to.include('<button type="submit" name="answer" value="notify">Notify</button>');
    expect(asked.text).to.include(
      '<button type="submit" name="answer" value="skip">Publish without notifying</button>',
    );
    expect(asked.text).to.include(`<input type="hidden" name="publishedUrl" value="${PUBLISHED_AT}"/>`);
    expect((await statusOf(id)).status).to.equal('new');
    expect(suite.receiver.at(company.path)).to.have.length(0);

    const sent = await console_
      .post(`${path}/publish`, { ...UNPUBLISHED, publishedUrl: PUBLISHED_AT, answer: 'notify' })
      .expect(303);
    const [webhook] = suite.receiver.at(company.path);
    expect(verifies(webhook!, company.secret)).to.equal(true);
    expect(JSON.parse(webhook!.body)).to.include({ id, publishedUrl: PUBLISHED_AT, status: 'published' });
    expect(await statusOf(id)).to.deep.equal({ status: 'published', published_url: PUBLISHED_AT });
    const page = await console_.get(sent.headers.location!).expect(200);
    expect(page.text).to.include('outcome sent: the receiver answered HTTP 204');
  });

  it('a failed notification: the receiver’s error, "Retry" (fails again), then "Skip notification" publishes', async () => {
    const company = await companyWithWebhook(suite.receiver);
    suite.receiver.on(company.path, { status: 500, body: '<b>down</b>' });
    const id = await apiReport(company.key);
    const path = `/console/companies/${company.companyId}/reports/${id}`;
    for (const attempt of [1, 2]) {
      const failed = await console_.postThenGet(`${path}/publish`, {
        ...UNPUBLISHED,
        publishedUrl: PUBLISHED_AT,
        answer: 'notify',
      });
      expect(failed.text).to.include(
        '<p class="form-error" role="alert">webhook delivery failed: the receiver answered HTTP 500</p>',
      );
      for (const name of ['Retry', 'Skip notification', 'Retry in the background'])
        expect(failed.text).to.include(`>${name}</button>`);
      expect((await statusOf(id)).status, `attempt ${attempt}`).to.equal('new');
      expect(suite.receiver.at(company.path)).to.have.length(attempt);
    }
    const skipped = await console_
      .post(`${path}/publish`, { ...UNPUBLISHED, publishedUrl: PUBLISHED_AT, answer: 'skip' })
      .expect(303);
    expect(await statusOf(id)).to.deep.equal({ status: 'published', published_url: PUBLISHED_AT });
    expect(suite.receiver.at(company.path)).to.have.length(2);
    expect((await console_.get(skipped.headers.location!).expect(200)).text).to.include(
      'the integration was not notified (outcome not_sent)',
    );
  });

  it('a failed notification shows the receiver’s answer to the attempt just made, as text', async () => {
    const company = await companyWithWebhook(suite.receiver);
    const id = await apiReport(company.key);
    const path = `/console/companies/${company.companyId}/reports/${id}`;
    suite.receiver.on(company.path, { status: 500, body: '<b>boom</b> upstream down' });
    const first = await console_.postThenGet(`${path}/publish`, {
      ...UNPUBLISHED,
      publishedUrl: PUBLISHED_AT,
      answer: 'notify',
    });
    expect(first.text).to.include('<pre>&lt;b>boom&lt;/b> upstream down</pre>');
    expect(first.text).not.to.include('<b>boom</b>');
    suite.receiver.on(company.path, { status: 503, body: 'second try: still down' });
    const second = await console_.postThenGet(`${path}/publish`, {
      ...UNPUBLISHED,
      publishedUrl: PUBLISHED_AT,
      answer: 'notify',
    });
    expect(second.text).to.include('<pre>second try: still down</pre>');
    expect(second.text).not.to.include('boom');
    // A refusal that makes no attempt (a disabled address) shows no earlier attempt's answer.
    await pool().query(`UPDATE integrations SET webhook_disabled_reason = 'gone' WHERE company_id = $1`, [
      company.companyId,
    ]);
    const none = await console_.postThenGet(`${path}/publish`, {
      ...UNPUBLISHED,
      publishedUrl: PUBLISHED_AT,
      answer: 'notify',
    });
    expect(none.text).to.include('the webhook address is disabled: gone');
    expect(none.text).not.to.include('still down');
    expect(suite.receiver.at(company.path)).to.have.length(2);
  });

  it('"Retry in the background" publishes and shows the outcome retrying with its next attempt', async () => {
    const company = await companyWithWebhook(suite.receiver);
    suite.receiver.on(company.path, { status: 503 });
    const id = await apiReport(company.key);
    const path = `/console/companies/${company.companyId}/reports/${id}`;
    const page = await console_.postThenGet(`${path}/publish`, {
      ...UNPUBLISHED,
      publishedUrl: PUBLISHED_AT,
      answer: 'background',
    });
    expect((await statusOf(id)).status).to.equal('published');
    expect(page.text).to.match(/outcome retrying, next attempt at \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC\)/);
  });

  it('publishes once for two concurrent publishes: the second is refused (409) while the first delivers', async () => {
    const company = await companyWithWebhook(suite.receiver);
    let answer!: () => void;
    const gate = new Promise<void>((resolve) => (answer = resolve));
    suite.receiver.on(company.path, { status: 204, waitFor: () => gate });
    const id = await apiReport(company.key);
    const path = `/console/companies/${company.companyId}/reports/${id}`;
    const send = () =>
      console_.post(`${path}/publish`, { ...UNPUBLISHED, publishedUrl: PUBLISHED_AT, answer: 'notify' }).then((r) => r);
    const both = [send(), send()];
    // One of them is refused while the other's delivery waits at the receiver; then the receiver answers.
    const refused = await Promise.race(both);
    answer();
    const statuses = (await Promise.all(both)).map((r) => r.status).sort();
    expect(statuses).to.deep.equal([303, 409]);
    expect(refused.status).to.equal(409);
    expect(refused.text).to.include(
      `<p class="form-error" role="alert">report ${id} is being published (its webhook delivery is in flight): try again later</p>`,
    );
    expect(suite.receiver.at(company.path)).to.have.length(1);
    expect((await statusOf(id)).status).to.equal('published');
  });

  it('publishes once for the same form sent twice, the second after the first finished: 409, the way back', async () => {
    const company = await companyWithWebhook(suite.receiver);
    const id = await apiReport(company.key);
    const path = `/console/companies/${company.companyId}/reports/${id}`;
    const shown = publishForm((await console_.get(path).expect(200)).text);
    expect(shown).to.include({ publishedAt: '' });
    const asked = await console_.postThenGet(`${path}/publish`, { ...shown, publishedUrl: PUBLISHED_AT });
    const answer = { ...publishForm(asked.text), answer: 'notify' };
    expect(answer).to.include({ publishedAt: '', publishedUrl: PUBLISHED_AT });

    await console_.post(`${path}/publish`, answer).expect(303);
    const published = (await api().get(`/internal/companies/${company.companyId}/reports/${id}`).set(auth).expect(200))
      .body as { updatedAt: string };
    const again = await console_.post(`${path}/publish`, answer).expect(409);
    expect(again.text).to.include(
      `This report was published meanwhile (at <time datetime="${published.updatedAt.slice(0, 19)}Z" title="${published.updatedAt.slice(0, 10)} ${published.updatedAt.slice(11, 19)} UTC">`,
    );
    expect(again.text).to.include(`, to ${PUBLISHED_AT}): nothing was published or sent now.`);
    expect(again.text).to.include(`<a href="${path}">Open the report again</a>`);
    expect(again.text).not.to.include('>Notify</button>');
    expect(suite.receiver.at(company.path)).to.have.length(1);

    // A page opened after the publish carries it, and publishes again (the API's rule): a second webhook.
    const fresh = publishForm((await console_.get(path).expect(200)).text);
    expect(fresh).to.include({ publishedAt: published.updatedAt });
    const reasked = await console_.postThenGet(`${path}/publish`, { ...fresh, publishedUrl: PUBLISHED_AT });
    await console_.post(`${path}/publish`, { ...publishForm(reasked.text), answer: 'notify' }).expect(303);
    expect(suite.receiver.at(company.path)).to.have.length(2);
    // The application API passes no precondition: it republishes as before.
    await consoleClient(suite.allowed.app)
      .post(`/internal/companies/${company.companyId}/reports/${id}/publish`)
      .set(auth)
      .send({ publishedUrl: PUBLISHED_AT, notifyIntegration: true })
      .expect(200);
    expect(suite.receiver.at(company.path)).to.have.length(3);
  });

  it('publishes once for the same form sent twice without the question (a report the webhook rules skip)', async () => {
    const { companyId } = await newCompany();
    const id = await appReport(companyId);
    const path = `/console/companies/${companyId}/reports/${id}`;
    const form = { ...publishForm((await console_.get(path).expect(200)).text), publishedUrl: PUBLISHED_AT };
    await console_.post(`${path}/publish`, form).expect(303);
    const before = (await pool().query('SELECT updated_at FROM reports WHERE id = $1', [id])).rows[0];
    await console_.post(`${path}/publish`, form).expect(409);
    expect((await pool().query('SELECT updated_at FROM reports WHERE id = $1', [id])).rows[0]).to.deep.equal(before);
  });

  it('refuses a publish form without the report’s state (400): nothing published', async () => {
    const { companyId } = await newCompany();
    const id = await appReport(companyId);
    const path = `/console/companies/${companyId}/reports/${id}`;
    const res = await console_.post(`${path}/publish`, { publishedUrl: PUBLISHED_AT }).expect(400);
    expect(res.text).to.include('the form is out of date: open the report again');
    expect((await statusOf(id)).status).to.equal('new');
  });

  it('refuses a published address that is not HTTPS at its field, with the API’s message (400)', async () => {
    const company = await companyWithWebhook(suite.receiver);
    const asking = await apiReport(company.key);
    const own = await appReport(company.companyId);
    const bad = 'http://reports.example.com/r/1';
    const expected = (
      await api()
        .post(`/internal/companies/${company.companyId}/reports/${own}/publish`)
        .set(auth)
        .send({ publishedUrl: bad, notifyIntegration: false })
        .expect(400)
    ).body.error as string;
    for (const id of [asking, own]) {
      const path = `/console/companies/${company.companyId}/reports/${id}`;
      const res = await console_.post(`${path}/publish`, { ...UNPUBLISHED, publishedUrl: bad }).expect(400);
      expect(res.text).to.include(`<p id="publish-publishedUrl-error" class="field-error">${expected}</p>`);
      expect(res.text).to.include('aria-invalid="true" aria-describedby="publish-publishedUrl-error"');
      expect(res.text).to.include(`value="${bad}"`);
      expect(res.text).not.to.include(QUESTION);
      expect((await statusOf(id)).status).to.equal('new');
    }
  });

  it('refuses a publish without the CSRF token (403): nothing published, no webhook', async () => {
    const company = await companyWithWebhook(suite.receiver);
    const id = await apiReport(company.key);
    const path = `/console/companies/${company.companyId}/reports/${id}/publish`;
    for (const answer of [{}, { answer: 'notify' }, { answer: 'skip' }] as Record<string, string>[])
      await console_.post(path, { ...UNPUBLISHED, publishedUrl: PUBLISHED_AT, ...answer }, null).expect(403);
    await console_.post(path, { ...UNPUBLISHED, publishedUrl: PUBLISHED_AT, answer: 'notify' }, 'wrong').expect(403);
    expect(await statusOf(id)).to.deep.equal({ status: 'new', published_url: '' });
    expect(suite.receiver.at(company.path)).to.have.length(0);
  });

  it('answers the 404 page for an unknown report and another company’s report, and changes nothing', async () => {
    const mine = await newCompany();
    const other = await newCompany();
    const theirs = await apiReport(other.key);
    const base = `/console/companies/${mine.companyId}/reports`;
    for (const id of ['5b0c6e2e-0000-4000-8000-000000000000', 'nope', theirs]) {
      const res = await console_.get(`${base}/${id}`).expect(404);
      expect(res.text).to.include('<h1>Not found</h1>');
      await console_.post(`${base}/${id}/start`, {}).expect(404);
      await console_
        .post(`${base}/${id}/publish`, { ...UNPUBLISHED, publishedUrl: PUBLISHED_AT, answer: 'skip' })
        .expect(404);
    }
    expect(await statusOf(theirs)).to.deep.equal({ status: 'new', published_url: '' });
    const inbox = await console_.get(base).expect(200);
    expect(inbox.text).not.to.include(theirs);
  });
});
