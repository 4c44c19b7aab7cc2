import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import request from 'supertest';
import { app, unique } from '../support/harness.js';
import { companiesNamed, consoleClient, signIn } from '../support/console.js';

/** "Create company" with this session, as a form would post it, with the test's changes to the request. */
async function createCompany(
  name: string,
  change: (fields: Record<string, string>) => Record<string, string>,
  headers: Record<string, string> = {},
) {
  const { cookie, csrf } = await signIn();
  return consoleClient()
    .post('/console/companies')
    .set({ Cookie: cookie, ...headers })
    .type('form')
    .send(change({ _csrf: csrf, name }));
}

describe('console: CSRF (a state-changing request from anywhere but its own page changes nothing)', () => {
  const refusals: [string, (f: Record<string, string>) => Record<string, string>, Record<string, string>][] = [
    ['without the token', ({ _csrf, ...rest }) => (void _csrf, rest), {}],
    ['with a wrong token', (f) => ({ ...f, _csrf: `${f._csrf}x` }), {}],
    ['with another session’s token', (f) => ({ ...f, _csrf: 'A'.repeat(43) }), {}],
    ['from a foreign Origin', (f) => f, { Origin: 'https://evil.example' }],
    ['with Sec-Fetch-Site: cross-site', (f) => f, { 'Sec-Fetch-Site': 'cross-site' }],
    ['from Origin null', (f) => f, { Origin: 'null', 'Sec-Fetch-Site': 'same-site' }],
    [
      'from Origin null, even beside Sec-Fetch-Site: same-origin',
      (f) => f,
      { Origin: 'null', 'Sec-Fetch-Site': 'same-origin' },
    ],
  ];
  for (const [what, change, headers] of refusals) {
    it(`refuses "Create company" ${what}: an HTML 403 page, no company made`, async () => {
      const name = unique('csrf');
      const res = await createCompany(name, change, headers);
      expect(res.status).to.equal(403);
      expect(res.headers['content-type']).to.match(/^text\/html/);
      expect(res.text).to.include('<h1>Refused</h1>');
      expect(await companiesNamed(name)).to.equal(0);
    });
  }

  it('accepts the form of its own origin with the session’s token (same-origin Origin and Sec-Fetch-Site)', async () => {
    const name = unique('csrf-ok');
    // Without Origin (an older browser), Sec-Fetch-Site: same-origin and the token suffice.
    const res = await createCompany(name, (f) => f, { 'Sec-Fetch-Site': 'same-origin' });
    expect(res.status).to.equal(303);
    expect(await companiesNamed(name)).to.equal(1);
    // The Origin of the server the request goes to: a server on a port of its own for the whole exchange.
    const server = createServer(app()).listen(0, '127.0.0.1');
    try {
      await once(server, 'listening');
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const { cookie, csrf } = await signIn();
      const second = unique('csrf-ok');
      await request(origin)
        .post('/console/companies')
        .set({ Cookie: cookie, Origin: origin, 'Sec-Fetch-Site': 'same-origin' })
        .type('form')
        .send({ _csrf: csrf, name: second })
        .expect(303);
      expect(await companiesNamed(second)).to.equal(1);
    } finally {
      server.close();
    }
  });

  it('refuses "Sign out" without the token: the session stays', async () => {
    const { cookie } = await signIn();
    await consoleClient().post('/console/sign-out').set('Cookie', cookie).type('form').send({}).expect(403);
    await consoleClient().get('/console/companies').set('Cookie', cookie).expect(200);
  });

  it('refuses a POST without a session, and a sign-in from a foreign origin', async () => {
    await consoleClient()
      .post('/console/companies')
      .type('form')
      .send({ name: unique('x'), _csrf: 'x' })
      .expect(403);
    await consoleClient()
      .post('/console/sign-in')
      .set('Sec-Fetch-Site', 'cross-site')
      .type('form')
      .send({ token: 'whatever' })
      .expect(403);
  });
});
