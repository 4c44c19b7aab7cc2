import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { newCompany, pool } from '../support/harness.js';
import { consoleClient, newPerson, signIn, signInAs } from '../support/console.js';

/**
 * A company always keeps an admin: its last one cannot be demoted or removed, by themself or by the
 * operator, with the console's refusal (409) on the Users page; two demotions at once leave one admin.
 */

type Session = { cookie: string; csrf: string };
const REFUSAL = 'a company always keeps an admin: make another person admin first';

const userIdOf = async (email: string) =>
  (await pool().query<{ user_id: string }>('SELECT user_id FROM user_accounts WHERE email = $1', [email])).rows[0]!
    .user_id;

const adminsOf = async (companyId: string) =>
  (
    await pool().query<{ email: string }>(
      "SELECT email FROM user_accounts WHERE company_id = $1 AND role = 'admin' ORDER BY email",
      [companyId],
    )
  ).rows.map((row) => row.email);

/** Posts a Users page action for the person of `email`: `role` with a role, `remove` without. */
async function act(session: Session, companyId: string, email: string, role?: string) {
  const path = `/console/companies/${companyId}/users/${await userIdOf(email)}/${role ? 'role' : 'remove'}`;
  return await consoleClient()
    .post(path)
    .set('Cookie', session.cookie)
    .type('form')
    .send({ _csrf: session.csrf, ...(role ? { role } : {}) });
}

/** The answer, once its status is the one expected. */
function answered<T extends { status: number }>(res: T, status: number): T {
  expect(res.status).to.equal(status);
  return res;
}

/** Waits until `n` statements wait for a lock (the test's, or each other's). */
async function untilBlocked(n: number): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const { rows } = await pool().query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND cardinality(pg_blocking_pids(pid)) > 0`,
    );
    if (rows[0]!.n >= n) return;
    await sleep(20);
  }
  throw new Error(`${n} statements were never blocked`);
}

describe('console: a company always keeps an admin', () => {
  it('refuses the last admin demoting themself (409, said on the page); they stay admin and signed in', async () => {
    const { companyId } = await newCompany();
    const { email } = await newPerson(companyId, 'admin');
    const admin = await signInAs(email);
    const res = answered(await act(admin, companyId, email, 'inspector'), 409);
    expect(res.text).to.include(REFUSAL);
    expect(await adminsOf(companyId)).to.deep.equal([email]);
    await consoleClient().get(`/console/companies/${companyId}/users`).set('Cookie', admin.cookie).expect(200);
    // Setting the role it has is no change of it.
    answered(await act(admin, companyId, email, 'admin'), 303);
  });

  it('refuses removing the last admin, the operator too; an inspector goes', async () => {
    const { companyId } = await newCompany();
    const { email } = await newPerson(companyId, 'admin');
    const inspector = await newPerson(companyId, 'inspector');
    const operator = await signIn();
    expect(answered(await act(operator, companyId, email), 409).text).to.include(REFUSAL);
    expect(answered(await act(operator, companyId, email, 'inspector'), 409).text).to.include(REFUSAL);
    expect(answered(await act(await signInAs(email), companyId, email), 409).text).to.include(REFUSAL);
    answered(await act(operator, companyId, inspector.email), 303);
    expect(await adminsOf(companyId)).to.deep.equal([email]);
  });

  it('lets one of two admins be demoted or removed, and then not the other', async () => {
    const { companyId } = await newCompany();
    const [a, b, c] = [
      await newPerson(companyId, 'admin'),
      await newPerson(companyId, 'admin'),
      await newPerson(companyId, 'admin'),
    ];
    const first = await signInAs(a.email);
    answered(await act(first, companyId, b.email, 'inspector'), 303);
    answered(await act(first, companyId, c.email), 303);
    answered(await act(first, companyId, a.email, 'inspector'), 409);
    expect(await adminsOf(companyId)).to.deep.equal([a.email]);
  });

  for (const who of ['each admin themself', 'the operator'] as const)
    it(`lets exactly one of two demotions at once pass: ${who} demoting both admins`, async () => {
      const { companyId } = await newCompany();
      const admins = [await newPerson(companyId, 'admin'), await newPerson(companyId, 'admin')];
      const operator = await signIn();
      const sessions = await Promise.all(
        admins.map(async ({ email }) => (who === 'the operator' ? operator : await signInAs(email))),
      );
      // The test holds the admins' rows, so that both requests are in the database before either goes on.
      const locker = await pool().connect();
      try {
        await locker.query('BEGIN');
        await locker.query('SELECT 1 FROM user_accounts WHERE company_id = $1 FOR UPDATE', [companyId]);
        const both = Promise.all(admins.map(({ email }, i) => act(sessions[i]!, companyId, email, 'inspector')));
        await untilBlocked(2);
        await locker.query('COMMIT');
        const statuses = (await both).map((res) => res.status);
        expect(statuses.sort()).to.deep.equal([303, 409]);
      } finally {
        locker.release();
      }
      expect(await adminsOf(companyId)).to.have.length(1);
    });
});
