import { expect } from 'chai';
import type { Express } from 'express';
import { api, app, APP_TOKEN, newCompany, pool, reportInput } from '../support/harness.js';
import { consoleClient, signIn } from '../support/console.js';
import { auth, webhookSuite } from '../support/webhooks.js';

const HOSTILE_ANSWER = '<script>alert(1)</script>';
/** What a webhook form sends with its default box ticked: the type every integration starts with. */
const PUBLISHED = 'report.published';

/** The page's path for a company. */
const page = (companyId: string) => `/console/companies/${companyId}/integrations/rest-api`;

/** A signed-in console on `target`, posting forms with the session's token unless told otherwise. */
async function consoleOn(target: Express = app()) {
  const { cookie, csrf } = await signIn(target);
  return {
    get: (path: string) => consoleClient(target).get(path).set('Cookie', cookie),
    post: (path: string, fields: Record<string, string> = {}, token: string | null = csrf) =>
      consoleClient(target)
        .post(path)
        .set('Cookie', cookie)
        .type('form')
        .send(token === null ? fields : { _csrf: token, ...fields }),
    /** A form's action answered 303 to `path`'s page (Post/Redirect/Get), and that page. */
    postThenGet: async (path: string, to: string, fields: Record<string, string> = {}) => {
      await consoleClient(target)
        .post(path)
        .set('Cookie', cookie)
        .type('form')
        .send({ _csrf: csrf, ...fields })
        .expect(303)
        .expect('Location', to);
      return consoleClient(target).get(to).set('Cookie', cookie).expect(200);
    },
    /** htmx's request for the part it swaps in (HX-Request): answered with the page, not a redirect. */
    postByHtmx: (path: string) =>
      consoleClient(target)
        .post(path)
        .set('Cookie', cookie)
        .set('HX-Request', 'true')
        .type('form')
        .send({ _csrf: csrf }),
    /** A form whose field comes several times (ticked checkboxes), in the order a browser sends them. */
    postFields: (path: string, fields: [string, string][]) =>
      consoleClient(target)
        .post(path)
        .set('Cookie', cookie)
        .type('form')
        .send(new URLSearchParams([['_csrf', csrf], ...fields]).toString()),
  };
}

/** The message the application API gives for this request, to compare the console's with. */
async function apiError(
  method: 'post' | 'put',
  url: string,
  body: object,
  status: number,
  target: Express = app(),
): Promise<string> {
  const res = await api(target)[method](url).set('Authorization', `Bearer ${APP_TOKEN}`).send(body).expect(status);
  return (res.body as { error: string }).error;
}

/** Text as preact writes it into HTML. */
const escaped = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('"', '&quot;');

const keysOf = async (companyId: string) =>
  Number(
    (
      await pool().query<{ n: string }>(
        'SELECT count(*) AS n FROM api_keys WHERE company_id IN (SELECT id FROM companies WHERE id = $1 OR sandbox_of = $1)',
        [companyId],
      )
    ).rows[0]!.n,
  );

const webhookOf = async (companyId: string) =>
  (
    await pool().query<{ url: string | null; secret: string | null }>(
      'SELECT webhook_url AS url, webhook_secret AS secret FROM integrations WHERE company_id = $1 AND revoked_at IS NULL',
      [companyId],
    )
  ).rows[0];

/** The event types of the company's (or sandbox's) active integration, as stored. */
const eventTypesOf = async (companyId: string) =>
  (
    await pool().query<{ event_types: string[] }>(
      'SELECT event_types FROM integrations WHERE company_id = $1 AND revoked_at IS NULL',
      [companyId],
    )
  ).rows[0]?.event_types;

const existingSandboxOf = async (companyId: string) =>
  (await pool().query<{ id: string }>('SELECT id FROM companies WHERE sandbox_of = $1', [companyId])).rows[0]!.id;

describe('console: Settings > Integrations > REST API', () => {
  const suite = webhookSuite();

  it('shows the page: heading "REST API", the breadcrumb, the two webhook regions', async () => {
    const { companyId } = await newCompany();
    const console = await consoleOn();
    const res = await console.get(page(companyId)).expect(200);
    expect(res.text).to.include('<h1>REST API</h1>');
    expect(res.text).to.match(/<li>Settings<\/li><li>Integrations<\/li><li aria-current="page">REST API<\/li>/);
    expect(res.text).to.include(
      '<section aria-labelledby="live-webhook-heading"><h2 id="live-webhook-heading">Live webhook</h2>',
    );
    expect(res.text).to.include('<h2 id="sandbox-webhook-heading">Sandbox webhook</h2>');
    expect(res.text).to.include('<button type="submit">Generate API Key</button>');
  });

  it('generates a live and a test key, each shown once after the redirect (never in a URL), listed, and revokes one after asking', async () => {
    const { companyId } = await newCompany();
    const console = await consoleOn();
    const live = await console.postThenGet(`${page(companyId)}/api-keys`, page(companyId), { mode: 'live' });
    const key = /<code id="new-key">([^<]+)<\/code>/.exec(live.text)![1]!;
    expect(key).to.match(/^irk_/);
    expect(live.text).to.include('<button type="button" data-copy="new-key">Copy</button>');
    await api().get('/auth').set('X-API-KEY', key).expect(200);
    // A reload shows the page without the key, and makes no second one.
    const reloaded = await console.get(page(companyId)).expect(200);
    expect(reloaded.text).not.to.include(key);
    expect(reloaded.text).not.to.include('id="new-key"');
    expect(await keysOf(companyId)).to.equal(2); // newCompany's key too

    const test = await console.postThenGet(`${page(companyId)}/api-keys`, page(companyId), { mode: 'test' });
    const testKey = /<code id="new-key">([^<]+)<\/code>/.exec(test.text)![1]!;
    expect(testKey).to.match(/^irk_test_/);

    const listed = await console.get(page(companyId)).expect(200);
    expect(listed.text).to.not.include(key);
    expect(listed.text).to.include(`aria-label="Revoke key ${key.slice(0, 12)}…">Revoke</a>`);
    expect(listed.text).to.include(`aria-label="Revoke key ${testKey.slice(0, 17)}…"`);
    expect(await keysOf(companyId)).to.equal(3); // newCompany's key too

    const id = (await api().get(`/internal/companies/${companyId}/api-keys`).set(auth).expect(200)).body.find(
      (k: { prefix: string }) => k.prefix === key.slice(0, 12),
    ).id as string;
    // "Revoke" asks first, on a page of its own; the key works until its button is pressed.
    const asked = await console.get(`${page(companyId)}/api-keys/${id}/revoke`).expect(200);
    expect(asked.text).to.include(`<h1>Revoke key ${key.slice(0, 12)}…?</h1>`);
    expect(asked.text).to.include(`<form method="post" action="${page(companyId)}/api-keys/${id}/revoke">`);
    expect(asked.text).to.include(`<a href="${page(companyId)}">Cancel</a>`);
    await api().get('/auth').set('X-API-KEY', key).expect(200);
    const revoked = await console.postThenGet(`${page(companyId)}/api-keys/${id}/revoke`, page(companyId));
    expect(revoked.text).to.include(`Key ${key.slice(0, 12)}… was revoked: a request with it is refused from now on.`);
    await api().get('/auth').set('X-API-KEY', key).expect(400, { error: 'invalid API key' });
    await console.get(`${page(companyId)}/api-keys/${id}/revoke`).expect(404);

    const again = await console.post(`${page(companyId)}/api-keys/${id}/revoke`).expect(404);
    expect(again.text).to.include(await apiErrorOfDelete(companyId, id));
  });

  it('refuses a mode that is neither live nor test with the API’s message (400)', async () => {
    const { companyId } = await newCompany();
    const console = await consoleOn();
    const res = await console.post(`${page(companyId)}/api-keys`, { mode: 'prod' }).expect(400);
    expect(res.text).to.include(
      await apiError('post', `/internal/companies/${companyId}/api-keys`, { mode: 'prod' }, 400),
    );
  });

  for (const world of ['live', 'sandbox'] as const) {
    const path = world === 'live' ? 'webhook' : 'sandbox/webhook';

    it(`${world}: refuses an address that is not https at the field, with the API’s message (400), nothing saved`, async () => {
      const { companyId } = await newCompany();
      const console = await consoleOn();
      const url = 'http://example.com/hook';
      const res = await console.post(`${page(companyId)}/${path}`, { url, eventTypes: PUBLISHED }).expect(400);
      const message = await apiError('put', `/internal/companies/${companyId}/${path}`, { url }, 400);
      expect(res.text).to.include(`<p id="${world}-webhook-url-error" class="field-error">${message}</p>`);
      expect(res.text).to.include(`aria-invalid="true" aria-describedby="${world}-webhook-url-error"`);
      expect(res.text).to.include(`value="${url}"`);
    });

    it(`${world}: shows the event types sent and saves the choice with the address; none ticked is the API’s 400`, async () => {
      const { companyId } = await newCompany();
      const console = await consoleOn();
      const box = (type: string, checked: boolean) =>
        `<input type="checkbox" name="eventTypes" value="${type}"${checked ? ' checked' : ''}/>`;
      const before = await console.get(page(companyId)).expect(200);
      const region = (html: string) => {
        const start = html.indexOf(`id="${world}-webhook-heading"`);
        return html.slice(start, html.indexOf('</section>', start));
      };
      expect(region(before.text)).to.include('<legend>Event types sent</legend>');
      expect(region(before.text)).to.include(box('report.published', true)).and.include(box('report.started', false));

      const url = 'https://crm.example.com/hooks/inspections';
      const both: [string, string][] = [
        ['url', url],
        ['eventTypes', 'report.published'],
        ['eventTypes', 'report.started'],
      ];
      await console
        .postFields(`${page(companyId)}/${path}`, both)
        .expect(303)
        .expect('Location', page(companyId));
      const owner = world === 'live' ? companyId : await existingSandboxOf(companyId);
      expect(await eventTypesOf(owner)).to.deep.equal(['report.published', 'report.started']);
      const after = await console.get(page(companyId)).expect(200);
      expect(region(after.text)).to.include(box('report.published', true)).and.include(box('report.started', true));

      const none = await console.postFields(`${page(companyId)}/${path}`, [['url', url]]).expect(400);
      const message = await apiError('put', `/internal/companies/${companyId}/${path}`, { url, eventTypes: [] }, 400);
      expect(none.text).to.include(`<p id="${world}-webhook-eventTypes-error" class="field-error">${message}</p>`);
      expect(region(none.text)).to.include(box('report.published', false)).and.include(box('report.started', false));
      expect(await eventTypesOf(owner)).to.deep.equal(['report.published', 'report.started']);
    });

    it(`${world}: saves the address, reveals the secret on a POST only, rotates it, sends a test delivery`, async () => {
      const { companyId } = await newCompany();
      const console = await consoleOn(suite.allowed.app);
      const hook = `/${world}-${companyId}`;
      suite.receiver.on(hook, { status: 200, body: HOSTILE_ANSWER });
      await console
        .post(`${page(companyId)}/${path}`, { url: suite.receiver.url(hook), eventTypes: PUBLISHED })
        .expect(303)
        .expect('Location', page(companyId));
      const shown = await console.get(page(companyId)).expect(200);
      expect(shown.text).to.include(`value="${suite.receiver.url(hook)}"`);

      const revealed = await console.postThenGet(`${page(companyId)}/${path}/secret/reveal`, page(companyId));
      const secret = new RegExp(`<code id="${world}-webhook-secret">(whsec_[^<]+)</code>`).exec(revealed.text)![1]!;
      const owner =
        world === 'live'
          ? companyId
          : (await pool().query('SELECT id FROM companies WHERE sandbox_of = $1', [companyId])).rows[0].id;
      expect((await webhookOf(owner))!.secret).to.equal(secret);
      expect((await console.get(page(companyId))).text).to.not.include(secret);

      // "Rotate secret" asks first; then the page says what it did, once.
      const asked = await console.get(`${page(companyId)}/${path}/secret/rotate`).expect(200);
      expect(asked.text).to.include(`<h1>Rotate the ${world} webhook signing secret?</h1>`);
      expect((await webhookOf(owner))!.secret).to.equal(secret);
      const rotated = await console.postThenGet(`${page(companyId)}/${path}/secret/rotate`, page(companyId));
      expect((await webhookOf(owner))!.secret).to.not.equal(secret);
      expect(rotated.text).to.include('The previous secret signs too until <time datetime=');
      expect(rotated.text).to.match(
        new RegExp(
          `<p>The ${world} webhook signing secret was rotated: the previous one signs too until \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2} UTC\\.</p>`,
        ),
      );
      expect((await console.get(page(companyId))).text).not.to.include('signing secret was rotated');

      // Without script: 303, the outcome shown once by the page; with htmx: the page itself, to swap its part in.
      const test = await console.postThenGet(`${page(companyId)}/${path}/test`, page(companyId));
      expect(suite.receiver.at(hook)).to.have.length(1);
      expect(test.text).to.include('Test delivery sent (status 200): the receiver answered HTTP 200');
      expect(test.text).to.include('&lt;script>alert(1)&lt;/script>');
      expect(test.text).to.not.include(HOSTILE_ANSWER);
      expect((await console.get(page(companyId))).text).not.to.include('Test delivery sent');
      const swapped = await console.postByHtmx(`${page(companyId)}/${path}/test`).expect(200);
      expect(swapped.text).to.include('Test delivery sent (status 200)');
      expect(suite.receiver.at(hook)).to.have.length(2);
    });

    it(`${world}: shows a failing receiver’s error with the API’s status and message (502)`, async () => {
      const { companyId } = await newCompany();
      const console = await consoleOn(suite.allowed.app);
      const hook = `/${world}-fail-${companyId}`;
      suite.receiver.on(hook, { status: 500, body: 'down' });
      await console
        .post(`${page(companyId)}/${path}`, { url: suite.receiver.url(hook), eventTypes: PUBLISHED })
        .expect(303);
      const res = await console.postByHtmx(`${page(companyId)}/${path}/test`).expect(502);
      const message = await apiError(
        'post',
        `/internal/companies/${companyId}/${path}/test`,
        {},
        502,
        suite.allowed.app,
      );
      expect(message).to.equal('webhook delivery failed: the receiver answered HTTP 500');
      expect(res.text).to.include(`Test delivery failed (status 502): ${message}`);
    });
  }

  it('shows the address guard refusing a loopback address at the test delivery, with the API’s message (502)', async () => {
    const { companyId } = await newCompany();
    // The harness's app: its notifier allows no private or loopback address.
    const console = await consoleOn();
    await console
      .post(`${page(companyId)}/webhook`, { url: suite.receiver.url('/guarded'), eventTypes: PUBLISHED })
      .expect(303);
    const res = await console.postThenGet(`${page(companyId)}/webhook/test`, page(companyId));
    const message = await apiError('post', `/internal/companies/${companyId}/webhook/test`, {}, 502);
    expect(message).to.include('127.0.0.1');
    expect(res.text).to.include(`Test delivery failed (status 502): ${message}`);
    expect(suite.receiver.at('/guarded')).to.deep.equal([]);
  });

  it('refuses a test delivery without an address with the API’s message (409)', async () => {
    const { companyId } = await newCompany();
    const console = await consoleOn();
    // No address: the buttons are not shown; a form sent anyway is refused as the API refuses it.
    const res = await console.postByHtmx(`${page(companyId)}/webhook/test`).expect(409);
    expect(res.text).to.include(await apiError('post', `/internal/companies/${companyId}/webhook/test`, {}, 409));
    const rotate = await console.post(`${page(companyId)}/webhook/secret/rotate`).expect(409);
    expect(rotate.text).to.include(await apiError('post', `/internal/companies/${companyId}/webhook/secret`, {}, 409));
  });

  it('shows a disabled address with its reason', async () => {
    const { companyId } = await newCompany();
    const console = await consoleOn();
    await console
      .post(`${page(companyId)}/webhook`, { url: 'https://receiver.example.com/h', eventTypes: PUBLISHED })
      .expect(303);
    await pool().query(
      `UPDATE integrations SET webhook_disabled_reason = 'the receiver answered HTTP 410' WHERE company_id = $1`,
      [companyId],
    );
    const res = await console.get(page(companyId)).expect(200);
    expect(res.text).to.include('Status: disabled (the receiver answered HTTP 410)');
  });

  it('lists every attempt newest first; redelivers an event; recovers failed events since a moment; refusals with the API’s words', async () => {
    const company = await newCompany();
    const { companyId } = company;
    const console = await consoleOn(suite.allowed.app);
    const hook = `/events-${companyId}`;
    suite.receiver.on(hook, { status: 500, body: '<b>busy</b>' });
    await console
      .post(`${page(companyId)}/webhook`, { url: suite.receiver.url(hook), eventTypes: PUBLISHED })
      .expect(303);
    const { body: created } = await api()
      .post('/reports/new')
      .set('X-API-KEY', company.key)
      .send(reportInput())
      .expect(200);
    const published = await api(suite.allowed.app)
      .post(`/internal/companies/${companyId}/reports/${created.id}/publish`)
      .set(auth)
      .send({ publishedUrl: 'https://reports.example.com/r/1', notifyIntegration: true, whenDeliveryFails: 'retry' })
      .expect(200);
    const eventId = published.body.webhook.eventId as string;
    await console.post(`${page(companyId)}/webhook/test`).expect(303);

    const listed = await console.get(page(companyId)).expect(200);
    const rows = listed.text.slice(listed.text.indexOf('Recent deliveries'));
    expect(rows.indexOf('test delivery')).to.be.within(0, rows.indexOf(`${eventId} (attempt 1)`));
    expect(rows).to.include('&lt;b>busy&lt;/b>');
    expect(rows).to.include(`action="${page(companyId)}/events/${eventId}/redeliver"`);

    const eventStatus = async () =>
      (await pool().query('SELECT status FROM webhook_events WHERE company_id = $1 AND id = $2', [companyId, eventId]))
        .rows[0].status as string;
    // Post/Redirect/Get: the outcome is on the page the redirect names, once; its reload sends nothing.
    const shown = await console.postThenGet(`${page(companyId)}/events/${eventId}/redeliver`, page(companyId));
    expect(await eventStatus()).to.equal('pending');
    expect(shown.text).to.include(`Event ${eventId} queued for redelivery.`);
    await pool().query(`UPDATE webhook_events SET status = 'failed', next_attempt_at = NULL WHERE company_id = $1`, [
      companyId,
    ]);
    expect((await console.get(page(companyId)).expect(200)).text).not.to.include('queued for');
    expect(await eventStatus()).to.equal('failed');
    // A crafted link shows nothing: no outcome is read from a URL.
    for (const forged of [
      `outcome=redelivered&event=${eventId}`,
      'outcome=recovered&queued=999999999',
      'outcome=sent&status=200',
    ])
      expect((await console.get(`${page(companyId)}?${forged}`).expect(200)).text).not.to.match(/queued for|Published/);

    const unknown = await console.post(`${page(companyId)}/events/msg_nope/redeliver`).expect(404);
    expect(unknown.text).to.include(
      await apiError('post', `/internal/companies/${companyId}/events/msg_nope/redeliver`, {}, 404),
    );

    const since = new Date(Date.now() - 60 * 60_000).toISOString().slice(0, 16);
    const counted = await console.postThenGet(`${page(companyId)}/events/redeliver`, page(companyId), { since });
    expect(await eventStatus()).to.equal('pending');
    await pool().query(`UPDATE webhook_events SET status = 'failed', next_attempt_at = NULL WHERE company_id = $1`, [
      companyId,
    ]);
    expect(counted.text).to.include('1 failed event(s) queued for redelivery.');
    expect(await eventStatus()).to.equal('failed');

    const bad = await console.post(`${page(companyId)}/events/redeliver`, { since: 'yesterday' }).expect(400);
    const message = await apiError(
      'post',
      `/internal/companies/${companyId}/events/redeliver`,
      { since: 'yesterday' },
      400,
    );
    expect(bad.text).to.include(`<p id="recover-since-error" class="field-error">${escaped(message)}</p>`);

    const bare = await newCompany();
    const none = await console.post(`${page(bare.companyId)}/events/redeliver`, { since }).expect(409);
    expect(none.text).to.include(
      await apiError('post', `/internal/companies/${bare.companyId}/events/redeliver`, { since: `${since}:00Z` }, 409),
    );
  });

  it('revokes the integration through a confirmation page that says what it deletes; the keys are refused after', async () => {
    const company = await newCompany();
    const console = await consoleOn();
    await console
      .post(`${page(company.companyId)}/webhook`, { url: 'https://receiver.example.com/h', eventTypes: PUBLISHED })
      .expect(303);
    const main = await console.get(page(company.companyId)).expect(200);
    expect(main.text).to.include(`<a href="${page(company.companyId)}/revoke">Revoke REST API Integration</a>`);
    const confirm = await console.get(`${page(company.companyId)}/revoke`).expect(200);
    expect(confirm.text).to.include('its 1 API key (live and test)');
    expect(confirm.text).to.include('webhook addresses and their signing secrets');
    expect(confirm.text).to.include('<button type="submit">Revoke REST API Integration</button>');
    await api().get('/auth').set('X-API-KEY', company.key).expect(200);
    const revoked = await console.postThenGet(`${page(company.companyId)}/revoke`, page(company.companyId));
    expect(revoked.text).to.include('The REST API integration was revoked');
    await api().get('/auth').set('X-API-KEY', company.key).expect(400, { error: 'invalid API key' });
    expect(await webhookOf(company.companyId)).to.equal(undefined);
  });

  describe('CSRF: each action without the token is refused (403) and changes nothing', () => {
    it('Generate API Key, Revoke, Save, Rotate secret, Reveal secret, Send test delivery, Redeliver, recover, Revoke REST API Integration', async () => {
      const company = await newCompany();
      const { companyId } = company;
      const console = await consoleOn(suite.allowed.app);
      suite.receiver.on('/csrf', { status: 204 });
      await console
        .post(`${page(companyId)}/webhook`, { url: suite.receiver.url('/csrf'), eventTypes: PUBLISHED })
        .expect(303);
      const before = await webhookOf(companyId);
      const keyId = (await api().get(`/internal/companies/${companyId}/api-keys`).set(auth).expect(200)).body[0].id;
      const noToken = async (path: string, fields: Record<string, string> = {}) => {
        const res = await console.post(`${page(companyId)}${path}`, fields, null).expect(403);
        expect(res.text).to.include('<h1>Refused</h1>');
        expect(res.text).to.not.include('whsec_');
      };
      await noToken('/api-keys', { mode: 'live' });
      await noToken(`/api-keys/${keyId}/revoke`);
      await noToken('/webhook', { url: 'https://other.example.com/h' });
      await noToken('/sandbox/webhook', { url: 'https://other.example.com/h' });
      await noToken('/webhook/secret/rotate');
      await noToken('/webhook/secret/reveal');
      await noToken('/webhook/test');
      await noToken('/events/msg_x/redeliver');
      await noToken('/events/redeliver', { since: '2026-01-01T00:00' });
      await noToken('/revoke');
      expect(await keysOf(companyId)).to.equal(1);
      expect(await webhookOf(companyId)).to.deep.equal(before);
      expect(suite.receiver.at('/csrf')).to.deep.equal([]);
      expect((await pool().query('SELECT 1 FROM companies WHERE sandbox_of = $1', [companyId])).rowCount).to.equal(0);
      await api().get('/auth').set('X-API-KEY', company.key).expect(200);
    });
  });
});

/** The API's 404 for a key it does not have. */
async function apiErrorOfDelete(companyId: string, keyId: string): Promise<string> {
  const res = await api().delete(`/internal/companies/${companyId}/api-keys/${keyId}`).set(auth).expect(404);
  return (res.body as { error: string }).error;
}
