import { expect } from 'chai';
import type { Express } from 'express';
import type { Pool } from '../../src/db/pool.js';
import { api, APP_TOKEN, newApp, newCompany, reportInput, unique } from '../support/harness.js';
import { consoleClient, csrfIn } from '../support/console.js';
import { captureLogs } from '../support/logs.js';
import { webhookSuite } from '../support/webhooks.js';

/** The text of the element with this id on a page (a new key, a revealed secret). */
function shownIn(html: string, id: string): string {
  const match = new RegExp(`<code id="${id}">([^<]+)</code>`).exec(html);
  if (!match) throw new Error(`the page shows no ${id}`);
  return match[1]!;
}

describe('console: no credential in the server’s logs', () => {
  const suite = webhookSuite();
  const logs = captureLogs('trace');
  let target: { app: Express; pool: Pool };
  before(() => {
    target = newApp({ notifier: suite.receiver.notifier(), logger: logs.logger });
  });
  after(() => target.pool.end());

  it('logs none of the application token, key, secrets, session cookie or CSRF token of a whole session', async () => {
    const client = () => consoleClient(target.app);
    const signedIn = await client().post('/console/sign-in').type('form').send({ token: APP_TOKEN }).expect(303);
    const cookie = ([] as string[]).concat(signedIn.headers['set-cookie'] ?? [])[0]!.split(';')[0]!;
    const sessionToken = cookie.split('=')[1]!;
    const csrf = csrfIn((await client().get('/console/companies').set('Cookie', cookie).expect(200)).text);
    const post = (path: string, fields: Record<string, string> = {}) =>
      client()
        .post(path)
        .set('Cookie', cookie)
        .type('form')
        .send({ _csrf: csrf, ...fields });
    /** A form's action (303), then the page its redirect names, where what it shows once is. */
    const shownAfter = async (path: string, fields?: Record<string, string>) => {
      const posted = await post(path, fields).expect(303);
      return (await client().get(posted.headers.location!).set('Cookie', cookie).expect(200)).text;
    };

    const { companyId } = await newCompany();
    const page = `/console/companies/${companyId}/integrations/rest-api`;
    const key = shownIn(await shownAfter(`${page}/api-keys`, { mode: 'live' }), 'new-key');
    const hook = `/${unique('logs')}`;
    await post(`${page}/webhook`, { url: suite.receiver.url(hook), eventTypes: 'report.published' }).expect(303);
    const secret = shownIn(await shownAfter(`${page}/webhook/secret/reveal`), 'live-webhook-secret');
    await post(`${page}/webhook/secret/rotate`).expect(303);
    const rotated = shownIn(await shownAfter(`${page}/webhook/secret/reveal`), 'live-webhook-secret');
    expect(rotated).not.to.equal(secret);

    const { body: report } = await api(target.app)
      .post('/reports/new')
      .set('X-API-KEY', key)
      .send(reportInput({ restId: unique('crm') }))
      .expect(200);
    const reportPage = `/console/companies/${companyId}/reports/${report.id}`;
    const publish = { publishedAt: '', publishedUrl: 'https://reports.example.com/r/logs' };
    await post(`${reportPage}/publish`, publish).expect(303);
    await post(`${reportPage}/publish`, { ...publish, answer: 'notify' }).expect(303);
    expect(suite.receiver.at(hook)).to.have.length(1);
    await post('/console/sign-out').expect(303);

    const lines = logs.text().split('\n').filter(Boolean);
    // Every request above was logged (by its route template), the pages the redirects name among them, so the
    // lines searched are the whole session's.
    const completed = lines.filter((line) => line.includes('"msg":"request completed"'));
    expect(completed).to.have.length(14);
    // The console's lines name its routes as mounted, by template: no id, no query.
    expect(
      completed.filter((line) => line.includes('"route":"/console/companies/:companyId/reports/:reportId/publish"')),
    ).to.have.length(2);
    expect(completed.filter((line) => line.includes('"route":"/console/sign-out"'))).to.have.length(1);
    for (const value of [APP_TOKEN, key, secret, rotated, sessionToken, csrf, '_csrf', 'console_session'])
      expect(lines.filter((line) => line.includes(value))).to.deep.equal([]);
  });
});
