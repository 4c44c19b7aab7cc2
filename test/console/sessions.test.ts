import { expect } from 'chai';
import type { Express } from 'express';
import { APP_TOKEN, newApp, newCompany, pool } from '../support/harness.js';
import { consoleClient, newPerson, PASSWORD, signIn, signInAs } from '../support/console.js';

type Session = { cookie: string; csrf: string };
const post = (session: Session, path: string, fields: object = {}, target?: Express) =>
  consoleClient(target)
    .post(path)
    .set('Cookie', session.cookie)
    .type('form')
    .send({ _csrf: session.csrf, ...fields });
/** Whether the session still opens a page (a session that ended is sent to the sign-in page). */
const stillOpen = async (session: Session, path: string, target?: Express) =>
  (await consoleClient(target).get(path).set('Cookie', session.cookie)).status === 200;

const userIdOf = async (email: string) =>
  (await pool().query<{ user_id: string }>('SELECT user_id FROM user_accounts WHERE email = $1', [email])).rows[0]!
    .user_id;

describe('console: what ends a session', () => {
  it('ends a person’s sessions when an admin removes them; the user stays, an inspector of reports', async () => {
    const { companyId } = await newCompany();
    const admin = await signInAs((await newPerson(companyId, 'admin')).email);
    const { email } = await newPerson(companyId, 'inspector');
    const inspector = await signInAs(email);
    const inbox = `/console/companies/${companyId}/reports`;
    expect(await stillOpen(inspector, inbox)).to.equal(true);
    await post(admin, `/console/companies/${companyId}/users/${await userIdOf(email)}/remove`).expect(303);
    const refused = await consoleClient().get(inbox).set('Cookie', inspector.cookie).expect(303);
    expect(refused.headers.location).to.equal(`/console?next=${encodeURIComponent(inbox)}`);
    const { rows } = await pool().query('SELECT 1 FROM users WHERE company_id = $1 AND email = $2', [companyId, email]);
    expect(rows).to.have.length(1);
    await consoleClient().post('/console/sign-in').type('form').send({ email, password: PASSWORD }).expect(401);
  });

  it('ends a person’s sessions when their role changes (and not when it is set to the same)', async () => {
    const { companyId } = await newCompany();
    const operator = await signIn();
    const { email } = await newPerson(companyId, 'inspector');
    const inspector = await signInAs(email);
    const inbox = `/console/companies/${companyId}/reports`;
    const role = `/console/companies/${companyId}/users/${await userIdOf(email)}/role`;
    await post(operator, role, { role: 'inspector' }).expect(303);
    expect(await stillOpen(inspector, inbox)).to.equal(true);
    await post(operator, role, { role: 'admin' }).expect(303);
    expect(await stillOpen(inspector, inbox)).to.equal(false);
    // Signed in again, the person has the new role.
    const admin = await signInAs(email);
    expect(admin.home).to.equal(`/console/companies/${companyId}`);
    await post(operator, role, { role: 'owner' }).expect(400);
  });

  it('ends every other session when the password changes; this browser goes on with a new one', async () => {
    const { companyId } = await newCompany();
    const { email } = await newPerson(companyId, 'inspector');
    const [here, there] = [await signInAs(email), await signInAs(email)];
    const wrong = await post(here, '/console/account/password', {
      current: 'not my password',
      password: 'a new long secret',
    });
    expect(wrong.status).to.equal(400);
    expect(wrong.text).to.include('This is not your current password.');
    const common = await post(here, '/console/account/password', { current: PASSWORD, password: 'password1234' });
    expect(common.status).to.equal(400);
    const res = await post(here, '/console/account/password', { current: PASSWORD, password: 'a new long secret' });
    expect(res.status).to.equal(303);
    const renewed = ([] as string[]).concat(res.headers['set-cookie'] ?? [])[0]!.split(';')[0]!;
    const shown = await consoleClient().get('/console/account').set('Cookie', renewed).expect(200);
    expect(shown.text).to.include('Password changed; every other session of yours has ended.');
    expect(await stillOpen(there, '/console/account')).to.equal(false);
    expect(await stillOpen(here, '/console/account')).to.equal(false);
    expect(await stillOpen({ cookie: renewed, csrf: '' }, '/console/account')).to.equal(true);
    await signInAs(email, 'a new long secret');
  });

  it('"Sign out everywhere" ends every session of the person, this one too', async () => {
    const { companyId } = await newCompany();
    const { email } = await newPerson(companyId, 'admin');
    const [here, there] = [await signInAs(email), await signInAs(email)];
    await post(here, '/console/account/sign-out-everywhere').expect(303).expect('Location', '/console');
    expect(await stillOpen(here, '/console/account')).to.equal(false);
    expect(await stillOpen(there, '/console/account')).to.equal(false);
    await signInAs(email);
  });

  it('ends the operator’s sessions when the application token changes', async () => {
    const session = await signIn();
    expect(await stillOpen(session, '/console/companies')).to.equal(true);
    const { app: changed, pool: own } = newApp({ appToken: `${APP_TOKEN}-rotated` });
    try {
      expect(await stillOpen(session, '/console/companies', changed)).to.equal(false);
    } finally {
      await own.end();
    }
  });
});

describe('console: back to the page after signing in again', () => {
  it('returns to the page asked for, for the operator and for a person', async () => {
    const { companyId } = await newCompany();
    const page = `/console/companies/${companyId}/reports?after=x`;
    const refused = await consoleClient().get(page).expect(303);
    const signInPage = await consoleClient().get(refused.headers.location!).expect(200);
    expect(signInPage.text).to.include(`<input type="hidden" name="next" value="${page.replace('&', '&amp;')}"/>`);
    const operator = await consoleClient()
      .post('/console/sign-in')
      .type('form')
      .send({ token: APP_TOKEN, next: page })
      .expect(303);
    expect(operator.headers.location).to.equal(page);
    const { email } = await newPerson(companyId, 'inspector');
    const person = await consoleClient()
      .post('/console/sign-in')
      .type('form')
      .send({ email, password: PASSWORD, next: page })
      .expect(303);
    expect(person.headers.location).to.equal(page);
  });

  it('never sends anyone off the console: another site, scheme-relative, backslashes, other paths go home', async () => {
    const { companyId } = await newCompany();
    const { email } = await newPerson(companyId, 'admin');
    for (const next of [
      'https://evil.example/console/',
      '//evil.example/console/',
      '/\\evil.example',
      '/console/\\\\evil.example',
      '/console/../..//evil.example',
      '/internal/companies',
      'javascript:alert(1)',
      '/console/%0d%0aSet-Cookie:x=1',
    ]) {
      const res = await consoleClient()
        .post('/console/sign-in')
        .type('form')
        .send({ email, password: PASSWORD, next })
        .expect(303);
      const location = res.headers.location as string;
      expect(location, next).to.match(/^\/console\//);
      expect(new URL(location, 'http://console.test').host, next).to.equal('console.test');
      expect(location, next).to.not.include('evil');
    }
    const page = await consoleClient().get('/console?next=//evil.example/').expect(200);
    expect(page.text).to.not.include('evil.example');
  });
});
