import { expect } from 'chai';
import type { Express } from 'express';
import { newApp, newCompany, pool, unique } from '../support/harness.js';
import { consoleClient, newPerson, PASSWORD } from '../support/console.js';
import type { Pool } from '../../src/db/pool.js';

let counter = 0;
/** A client address of its own for each use, so that no test shares another's count. */
const newAddress = () => `10.${process.pid % 250}.${Math.floor(++counter / 250)}.${counter % 250}`;

/** Apps behind a trusted proxy (X-Forwarded-For is the client's address), with an application token of their own. */
function apps(count: number, appToken = unique('token')): { apps: Express[]; token: string; pools: Pool[] } {
  const made = Array.from({ length: count }, () => newApp({ trustProxy: true, appToken }));
  return { apps: made.map((m) => m.app), pools: made.map((m) => m.pool), token: appToken };
}

const attempt = (target: Express, address: string, fields: object) =>
  consoleClient(target).post('/console/sign-in').set('X-Forwarded-For', address).type('form').send(fields);

function expectRefused(res: { status: number; headers: Record<string, string>; text: string }) {
  expect(res.status).to.equal(429);
  expect(Number(res.headers['retry-after'])).to.be.within(1, 900);
  expect(res.text).to.match(/Too many failed sign-ins: try again in \d+ minute\(s\), after \d\d:\d\d UTC\./);
  expect(res.headers['set-cookie']).to.equal(undefined);
}

describe('console: failed sign-ins are limited per account and per client address', () => {
  let made: ReturnType<typeof apps>;
  let companyId: string;
  beforeEach(async () => {
    made = apps(2);
    ({ companyId } = await newCompany());
  });
  afterEach(async () => {
    await Promise.all(made.pools.map((p) => p.end()));
  });

  it('refuses an account after 10 failures in 15 minutes, from any address and any process: 429, Retry-After, a page', async () => {
    const { email } = await newPerson(companyId, 'inspector');
    for (let i = 0; i < 10; i++)
      await attempt(made.apps[i % 2]!, newAddress(), { email, password: `wrong password ${i}` }).expect(401);
    expectRefused(await attempt(made.apps[0]!, newAddress(), { email, password: PASSWORD }));
    // Another account, from an address that failed once, is not locked out.
    const other = await newPerson(companyId, 'admin');
    await attempt(made.apps[1]!, newAddress(), { email: other.email, password: PASSWORD }).expect(303);
    // Once the window has passed, the account signs in again.
    await pool().query(
      `UPDATE console_sign_in_failures SET window_start = now() - interval '15 minutes'
        WHERE key_hash = sha256(convert_to('account:' || lower($1), 'UTF8'))`,
      [email],
    );
    await attempt(made.apps[0]!, newAddress(), { email, password: PASSWORD }).expect(303);
  });

  it('refuses an address after 10 failures on any accounts; the accounts sign in from elsewhere', async () => {
    const { email } = await newPerson(companyId, 'admin');
    const address = newAddress();
    for (let i = 0; i < 10; i++)
      await attempt(made.apps[i % 2]!, address, {
        email: `${unique('nobody')}@example.com`,
        password: PASSWORD,
      }).expect(401);
    expectRefused(await attempt(made.apps[0]!, address, { email, password: PASSWORD }));
    await attempt(made.apps[1]!, newAddress(), { email, password: PASSWORD }).expect(303);
  });

  it('counts the operator’s token sign-in too; a company’s person is not locked out by it', async () => {
    for (let i = 0; i < 10; i++) await attempt(made.apps[i % 2]!, newAddress(), { token: `wrong-${i}` }).expect(401);
    expectRefused(await attempt(made.apps[0]!, newAddress(), { token: made.token }));
    const { email } = await newPerson(companyId, 'admin');
    await attempt(made.apps[1]!, newAddress(), { email, password: PASSWORD }).expect(303);
  });

  it('counts no success, and no more than 10 attempts even when they come at once', async () => {
    const { email } = await newPerson(companyId, 'inspector');
    const address = newAddress();
    for (let i = 0; i < 12; i++) await attempt(made.apps[i % 2]!, address, { email, password: PASSWORD }).expect(303);
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        attempt(made.apps[i % 2]!, address, { email, password: `wrong ${i} guess` }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 401)).to.have.length(10);
    expect(statuses.filter((s) => s === 429)).to.have.length(6);
  });
});
