import { expect } from 'chai';
import type { Response } from 'supertest';
import { createApp } from '../../src/app.js';
import { createPool } from '../../src/db/pool.js';
import { appDeps, databaseUrl, newCompany } from '../support/harness.js';
import { consoleClient, signIn } from '../support/console.js';

const CSP =
  "default-src 'none';script-src 'self';style-src 'self';img-src 'self';connect-src 'self';" +
  "form-action 'self';frame-ancestors 'none';base-uri 'none'";

function expectConsoleHeaders(res: Response, what: string): void {
  expect(res.headers['content-security-policy'], what).to.equal(CSP);
  expect(res.headers['cache-control'], what).to.equal('no-store');
  expect(res.headers['x-frame-options'], what).to.equal('DENY');
  expect(res.headers['referrer-policy'], what).to.equal('same-origin');
  expect(res.headers['x-content-type-options'], what).to.equal('nosniff');
}

/** An HTML page of the console: the layout's document, and nothing of a stack or a JSON error. */
function expectPage(res: Response, status: number, what: string): void {
  expect(res.status, what).to.equal(status);
  expect(res.headers['content-type'], what).to.equal('text/html; charset=utf-8');
  expect(res.text, what).to.match(/^<!doctype html><html lang="en">/);
  expect(res.text.match(/<h1>/g), what).to.have.length(1);
  expect(res.text, what).not.to.match(/"error"|\bat \/|node_modules|Error:/);
  expectConsoleHeaders(res, what);
}

describe('console: headers, assets and error pages', () => {
  it('sends the CSP and the other headers with every page, signed out and in, errors included', async () => {
    const { cookie, csrf } = await signIn();
    const { companyId } = await newCompany();
    const post = (path: string, fields: object) =>
      consoleClient().post(path).set('Cookie', cookie).type('form').send(fields);
    const pages: [string, Response, number][] = [
      ['sign-in page', await consoleClient().get('/console'), 200],
      ['wrong token', await consoleClient().post('/console/sign-in').type('form').send({ token: 'x' }), 401],
      ['companies', await consoleClient().get('/console/companies').set('Cookie', cookie), 200],
      ['company', await consoleClient().get(`/console/companies/${companyId}`).set('Cookie', cookie), 200],
      ['field error', await post('/console/companies', { _csrf: csrf, name: '' }), 400],
      ['CSRF refusal', await post('/console/companies', { name: 'x' }), 403],
      ['unknown page', await consoleClient().get('/console/nowhere').set('Cookie', cookie), 404],
      ['unknown company', await consoleClient().get('/console/companies/x').set('Cookie', cookie), 404],
    ];
    for (const [what, res, status] of pages) expectPage(res, status, what);
    const redirect = await consoleClient().get('/console/companies');
    expect(redirect.status).to.equal(303);
    expectConsoleHeaders(redirect, 'redirect to sign in');
  });

  it('refuses a form over the limit with the HTML 413 page, and reads one just under it', async () => {
    const { cookie, csrf } = await signIn();
    const form = (size: number) => `_csrf=${csrf}&name=${'a'.repeat(size - csrf.length - '_csrf=&name='.length)}`;
    const send = (body: string) =>
      consoleClient()
        .post('/console/companies')
        .set('Cookie', cookie)
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send(body);
    expectPage(await send(form(64 * 1024 + 1)), 413, 'over the limit');
    // Read, and refused by the schema (a name is short), not by the size.
    expectPage(await send(form(64 * 1024)), 400, 'at the limit');
  });

  it('answers a failure with the HTML 500 page, no detail of it', async () => {
    const broken = createPool({ connectionString: databaseUrl(), max: 1 });
    await broken.end();
    const app = createApp(appDeps(broken));
    const res = await consoleClient(app).get('/console/companies').set('Cookie', 'console_session=anything');
    expectPage(res, 500, 'a failing database');
    expect(res.text).to.include('something went wrong on our side');
  });

  it('serves htmx, its CSS and its script from this origin, with the same headers', async () => {
    const assets: [string, RegExp][] = [
      ['/console/assets/htmx.min.js', /javascript/],
      ['/console/assets/console.js', /javascript/],
      ['/console/assets/console.css', /text\/css/],
    ];
    for (const [path, type] of assets) {
      const res = await consoleClient().get(path).expect(200);
      expect(res.headers['content-type'], path).to.match(type);
      expectConsoleHeaders(res, path);
      expect(res.text.length, path).to.be.greaterThan(100);
    }
    const htmx = await consoleClient().get('/console/assets/htmx.min.js');
    expect(htmx.text).to.include('htmx');
  });
});
