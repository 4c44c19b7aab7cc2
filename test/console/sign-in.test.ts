import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { sweepExpiredSessions } from '../../src/console/sessions.js';
import { APP_TOKEN, newApp, pool } from '../support/harness.js';
import { consoleClient, csrfIn, signIn } from '../support/console.js';

const tokenOf = (cookie: string) => decodeURIComponent(cookie.split('=')[1]!);
const rowsOf = async (cookie: string) =>
  (
    await pool().query('SELECT 1 FROM console_sessions WHERE token_hash = $1', [
      createHash('sha256').update(tokenOf(cookie)).digest(),
    ])
  ).rowCount;

describe('console: signing in and out', () => {
  it('shows the sign-in page at /console when no one is signed in, and sends other pages there', async () => {
    const page = await consoleClient()
      .get('/console')
      .expect(200)
      .expect('Content-Type', /text\/html/);
    expect(page.text).to.match(/<label for="sign-in-token">Application token<\/label>/);
    expect(page.text).to.include('<button type="submit">Sign in</button>');
    expect(page.text).not.to.include('Sign out');
    await consoleClient()
      .get('/console/companies')
      .expect(303)
      .expect('Location', '/console?next=%2Fconsole%2Fcompanies');
  });

  it('refuses a wrong token with the page again (401), a message at the field and no cookie', async () => {
    const res = await consoleClient()
      .post('/console/sign-in')
      .type('form')
      .send({ token: `${APP_TOKEN}x` });
    expect(res.status).to.equal(401);
    expect(res.headers['set-cookie']).to.equal(undefined);
    expect(res.text).to.include('aria-invalid="true"');
    expect(res.text).to.include('aria-describedby="sign-in-token-error"');
    expect(res.text).to.include('This is not the application token.');
  });

  it('signs in with the application token: an HttpOnly, SameSite=Strict cookie for /console that expires', async () => {
    const res = await consoleClient().post('/console/sign-in').type('form').send({ token: APP_TOKEN }).expect(303);
    expect(res.headers.location).to.equal('/console/companies');
    const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    expect(cookie).to.have.length(1);
    expect(cookie[0]).to.match(/^console_session=[\w-]{43}; Max-Age=28800; Path=\/console; HttpOnly; SameSite=Strict$/);
    const session = cookie[0]!.split(';')[0]!;
    await consoleClient().get('/console').set('Cookie', session).expect(303).expect('Location', '/console/companies');
  });

  it('over HTTPS behind a trusted proxy, the cookie is Secure and __Host- (Path=/, as that prefix requires)', async () => {
    const { app, pool: own } = newApp({ trustProxy: true });
    try {
      const res = await consoleClient(app)
        .post('/console/sign-in')
        .set('X-Forwarded-Proto', 'https')
        .type('form')
        .send({ token: APP_TOKEN })
        .expect(303);
      const [cookie] = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
      expect(cookie).to.match(
        /^__Host-console_session=[\w-]{43}; Max-Age=28800; Path=\/; HttpOnly; Secure; SameSite=Strict$/,
      );
      const session = cookie!.split(';')[0]!;
      await consoleClient(app)
        .get('/console/companies')
        .set('X-Forwarded-Proto', 'https')
        .set('Cookie', session)
        .expect(200);
      // Over plain HTTP that cookie is not the session's.
      await consoleClient(app).get('/console/companies').set('Cookie', session).expect(303);
    } finally {
      await own.end();
    }
  });

  it('behind a TLS proxy it does not trust (TRUST_PROXY off): a page saying to set TRUST_PROXY, never a cookie', async () => {
    const proxied = [
      ['X-Forwarded-Proto', 'https'],
      ['X-Forwarded-Proto', 'https, http'],
      ['Forwarded', 'for=192.0.2.1;proto=https;host=console.example.com'],
    ];
    for (const [name, value] of proxied) {
      const signIn = await consoleClient()
        .post('/console/sign-in')
        .set(name!, value!)
        .type('form')
        .send({ token: APP_TOKEN });
      expect(signIn.status, `${name}: ${value}`).to.equal(403);
      expect(signIn.headers['set-cookie']).to.equal(undefined);
      expect(signIn.text).to.include('<h1>Refused</h1>');
      expect(signIn.text).to.include('set TRUST_PROXY=true');
      expect((await consoleClient().get('/console').set(name!, value!)).status).to.equal(403);
    }
    // A proxy that says the client came over plain HTTP changes nothing.
    await consoleClient()
      .post('/console/sign-in')
      .set('X-Forwarded-Proto', 'http')
      .type('form')
      .send({ token: APP_TOKEN })
      .expect(303);
  });

  it('signs out: the session row is deleted, so the old cookie signs no one in', async () => {
    const { cookie, csrf } = await signIn();
    expect(await rowsOf(cookie)).to.equal(1);
    const res = await consoleClient()
      .post('/console/sign-out')
      .set('Cookie', cookie)
      .type('form')
      .send({ _csrf: csrf })
      .expect(303);
    expect(res.headers.location).to.equal('/console');
    expect(([] as string[]).concat(res.headers['set-cookie'] ?? [])[0]).to.match(
      /^console_session=; Max-Age=0; Path=\/console;/,
    );
    expect(await rowsOf(cookie)).to.equal(0);
    await consoleClient()
      .get('/console/companies')
      .set('Cookie', cookie)
      .expect(303)
      .expect('Location', '/console?next=%2Fconsole%2Fcompanies');
  });

  it('refuses an expired session, and the sweep deletes it', async () => {
    const { cookie } = await signIn();
    const hash = createHash('sha256').update(tokenOf(cookie)).digest();
    await pool().query("UPDATE console_sessions SET expires_at = now() - interval '1 second' WHERE token_hash = $1", [
      hash,
    ]);
    await consoleClient()
      .get('/console/companies')
      .set('Cookie', cookie)
      .expect(303)
      .expect('Location', '/console?next=%2Fconsole%2Fcompanies');
    await sweepExpiredSessions(pool());
    expect(await rowsOf(cookie)).to.equal(0);
  });

  it('puts the session’s CSRF token in every signed-in page’s forms, "Sign out" among them', async () => {
    const { cookie, csrf } = await signIn();
    const page = await consoleClient().get('/console/companies').set('Cookie', cookie).expect(200);
    expect(csrfIn(page.text)).to.equal(csrf);
    expect(page.text).to.include('<button type="submit">Sign out</button>');
    expect(page.text).to.include('<a href="/console/companies">Companies</a>');
  });
});
