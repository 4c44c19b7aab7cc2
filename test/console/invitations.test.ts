import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { pool, newCompany, unique } from '../support/harness.js';
import { consoleClient, csrfIn, newPerson, PASSWORD, signIn, signInAs } from '../support/console.js';

/** The operator invites an e-mail to a company with a role: the link the page shows once, and its token. */
async function inviteAs(
  session: { cookie: string; csrf: string },
  companyId: string,
  role = 'inspector',
  email = `${unique('invitee')}@example.com`,
) {
  const users = `/console/companies/${companyId}/users`;
  await consoleClient()
    .post(`${users}/invitations`)
    .set('Cookie', session.cookie)
    .type('form')
    .send({ _csrf: session.csrf, email, role })
    .expect(303)
    .expect('Location', users);
  // The link is shown once, by the page the redirect names.
  const res = await consoleClient().get(users).set('Cookie', session.cookie).expect(200);
  const link = /<code id="invitation-link">([^<]+)<\/code>/.exec(res.text)![1]!;
  const again = await consoleClient().get(users).set('Cookie', session.cookie).expect(200);
  expect(again.text, 'the link is shown once').not.to.include(link);
  return { email, link, path: new URL(link).pathname, page: res.text };
}

const accept = (path: string, fields: Record<string, string>) => consoleClient().post(path).type('form').send(fields);

describe('console: invitations and their links', () => {
  it('shows the link once, keeps only its hash; the invitee chooses a password and is signed in at home', async () => {
    const { companyId } = await newCompany();
    const operator = await signIn();
    const { email, link, path } = await inviteAs(operator, companyId, 'admin');
    expect(link).to.match(/^http:\/\/127\.0\.0\.1:\d+\/console\/invitations\/inv_[\w-]{43}$/);
    const token = decodeURIComponent(path.split('/').pop()!);
    const { rows } = await pool().query('SELECT token_hash FROM user_invitations WHERE lower(email) = lower($1)', [
      email,
    ]);
    expect(rows[0].token_hash).to.deep.equal(createHash('sha256').update(token).digest());
    const users = await consoleClient().get(`/console/companies/${companyId}/users`).set('Cookie', operator.cookie);
    expect(users.text).to.include(`${email} (admin)`).and.not.include(token);

    const page = await consoleClient().get(path).expect(200);
    expect(page.text).to.include('<label for="invitation-name">Your name</label>');
    expect(page.text).to.include('<label for="invitation-password">Choose a password</label>');
    const res = await accept(path, { name: 'Alex Admin', password: PASSWORD }).expect(303);
    expect(res.headers.location).to.equal(`/console/companies/${companyId}`);
    const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? [])[0]!.split(';')[0]!;
    const home = await consoleClient().get(res.headers.location!).set('Cookie', cookie).expect(200);
    expect(home.text).to.include('Alex Admin');
    const { rows: stored } = await pool().query(
      'SELECT password_hash FROM user_accounts WHERE lower(email) = lower($1)',
      [email],
    );
    expect(stored[0].password_hash).to.match(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(stored[0].password_hash).to.not.include(PASSWORD);
  });

  it('refuses a link used twice (410), expired (410), revoked (410) and unknown (404)', async () => {
    const { companyId } = await newCompany();
    const operator = await signIn();
    const used = await inviteAs(operator, companyId);
    await accept(used.path, { name: 'Once', password: PASSWORD }).expect(303);
    const again = await accept(used.path, { name: 'Twice', password: PASSWORD }).expect(410);
    expect(again.text).to.include('this invitation was used: ask for a new one');
    await consoleClient().get(used.path).expect(410);

    const expired = await inviteAs(operator, companyId);
    await pool().query(
      "UPDATE user_invitations SET expires_at = now() - interval '1 second' WHERE company_id = $1 AND email = $2",
      [companyId, expired.email],
    );
    expect((await consoleClient().get(expired.path).expect(410)).text).to.include('was not used in time');
    await accept(expired.path, { name: 'Late', password: PASSWORD }).expect(410);

    const revoked = await inviteAs(operator, companyId);
    const list = await consoleClient().get(`/console/companies/${companyId}/users`).set('Cookie', operator.cookie);
    const id = new RegExp(`${revoked.email.replace(/\./g, '\\.')}[^]*?/invitations/([0-9a-f-]{36})/revoke`).exec(
      list.text,
    )![1]!;
    await consoleClient()
      .post(`/console/companies/${companyId}/users/invitations/${id}/revoke`)
      .set('Cookie', operator.cookie)
      .type('form')
      .send({ _csrf: operator.csrf })
      .expect(303);
    expect((await accept(revoked.path, { name: 'No', password: PASSWORD }).expect(410)).text).to.include('was revoked');

    await consoleClient().get('/console/invitations/inv_unknown').expect(404);
    const { rows } = await pool().query(
      'SELECT count(*)::int AS n FROM user_accounts a JOIN users u ON u.company_id = a.company_id AND u.id = a.user_id WHERE a.company_id = $1',
      [companyId],
    );
    expect(rows[0].n).to.equal(1);
  });

  it('refuses a password shorter than 12, longer than 256, or well-known, at the field; takes any other', async () => {
    const { companyId } = await newCompany();
    const { path } = await inviteAs(await signIn(), companyId);
    const refused = async (password: string, message: string) => {
      const res = await accept(path, { name: 'Pat', password }).expect(400);
      expect(res.text).to.include(`<p id="invitation-password-error" class="field-error">${message}</p>`);
    };
    await refused('short pass1', 'password must be at least 12 characters');
    await refused('x'.repeat(257), 'password must be at most 256 characters');
    await refused('qwerty123456', 'password is a well-known common password: choose another');
    await refused('Password1234', 'password is a well-known common password: choose another');
    const noName = await accept(path, { name: '', password: PASSWORD }).expect(400);
    expect(noName.text).to.include('id="invitation-name-error"');
    // No composition rules: twelve lower-case letters and spaces will do; so will 256 characters.
    await accept(path, { name: 'Pat', password: 'plain words only' }).expect(303);
  });

  it('gives an existing user of the company the account, keeping their name; refuses an e-mail that has one', async () => {
    const email = `${unique('dana')}@example.com`;
    const { companyId } = await newCompany([{ name: 'Dana Inspector', email }]);
    const operator = await signIn();
    const { path } = await inviteAs(operator, companyId, 'inspector', email.toUpperCase());
    const page = await consoleClient().get(path).expect(200);
    expect(page.text).to.include('Your name in the company: Dana Inspector').and.not.include('invitation-name');
    await accept(path, { password: PASSWORD }).expect(303);
    const again = await consoleClient()
      .post(`/console/companies/${companyId}/users/invitations`)
      .set('Cookie', operator.cookie)
      .type('form')
      .send({ _csrf: operator.csrf, email, role: 'admin' })
      .expect(409);
    expect(again.text).to.include('already has a console account in this company');
    const { email: elsewhere } = await newPerson((await newCompany()).companyId, 'admin');
    const taken = await inviteAs(operator, companyId, 'inspector', elsewhere);
    expect((await accept(taken.path, { name: 'X', password: PASSWORD }).expect(409)).text).to.include(
      'already has a console account',
    );
  });

  it('refuses a bad e-mail or role in "Invite" at the field (400), the form kept', async () => {
    const { companyId } = await newCompany();
    const operator = await signIn();
    const send = (fields: object) =>
      consoleClient()
        .post(`/console/companies/${companyId}/users/invitations`)
        .set('Cookie', operator.cookie)
        .type('form')
        .send({ _csrf: operator.csrf, ...fields });
    const badEmail = await send({ email: 'not-an-address', role: 'admin' }).expect(400);
    expect(badEmail.text).to.include(
      '<p id="invite-email-error" class="field-error">email must be an e-mail address</p>',
    );
    expect(badEmail.text).to.include('value="not-an-address"');
    expect((await send({ email: 'a@example.com', role: 'owner' }).expect(400)).text).to.include(
      'role must be one of admin, inspector',
    );
  });

  it('lets an admin invite into their own company only, and accepts an inspector who lands on the inbox', async () => {
    const { companyId } = await newCompany();
    const admin = await signInAs((await newPerson(companyId, 'admin')).email);
    const { path } = await inviteAs(admin, companyId, 'inspector');
    const res = await accept(path, { name: 'Ina', password: PASSWORD }).expect(303);
    expect(res.headers.location).to.equal(`/console/companies/${companyId}/reports`);
    const elsewhere = await newCompany();
    await consoleClient()
      .post(`/console/companies/${elsewhere.companyId}/users/invitations`)
      .set('Cookie', admin.cookie)
      .type('form')
      .send({ _csrf: admin.csrf, email: 'x@example.com', role: 'admin' })
      .expect(404);
    const page = await consoleClient().get(`/console/companies/${companyId}/users`).set('Cookie', admin.cookie);
    expect(csrfIn(page.text)).to.equal(admin.csrf);
  });
});
