import type { Express } from 'express';
import request from 'supertest';
import { acceptInvitation, hashPassword, invite, type Role } from '../../src/companies/index.js';
import { app, APP_TOKEN, pool, unique } from './harness.js';

/**
 * The console through HTTP. Its pages are no operations of openapi.yaml, so they are requested with
 * plain supertest (harness.api() checks answers against the document).
 */
export const consoleClient = (target: Express = app()) => request(target);

/** The CSRF token of a page's forms. */
export function csrfIn(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('the page has no CSRF field');
  return match[1]!;
}

/** Signs in with the application token: the session cookie (name=value) and the session's CSRF token. */
export async function signIn(target: Express = app()): Promise<{ cookie: string; csrf: string }> {
  const res = await consoleClient(target).post('/console/sign-in').type('form').send({ token: APP_TOKEN }).expect(303);
  const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? [])[0]!.split(';')[0]!;
  const page = await consoleClient(target).get('/console/companies').set('Cookie', cookie).expect(200);
  return { cookie, csrf: csrfIn(page.text) };
}

/** How many companies have this name (what a refused form must leave unchanged). */
export async function companiesNamed(name: string): Promise<number> {
  const { rows } = await pool().query<{ n: string }>('SELECT count(*) AS n FROM companies WHERE name = $1', [name]);
  return Number(rows[0]!.n);
}

/** A password the rules take (12 characters or more, no common one). */
export const PASSWORD = 'correct horse battery staple';

/** A company's person with a console account (invited and accepted through the component): their e-mail. */
export async function newPerson(companyId: string, role: Role, password = PASSWORD): Promise<{ email: string }> {
  const email = `${unique(role)}@example.com`;
  const by = { actor: { type: 'operator' } as const, clientAddress: '', companyId };
  const { token } = await invite(pool(), companyId, email, role, by);
  await acceptInvitation(pool(), token, { name: `Person ${email}`, passwordHash: await hashPassword(password) });
  return { email };
}

/** Signs a person in with e-mail and password: the session cookie and CSRF token, and the page it led to. */
export async function signInAs(
  email: string,
  password = PASSWORD,
  target: Express = app(),
): Promise<{ cookie: string; csrf: string; home: string }> {
  const res = await consoleClient(target).post('/console/sign-in').type('form').send({ email, password }).expect(303);
  const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? [])[0]!.split(';')[0]!;
  const home = res.headers.location as string;
  const page = await consoleClient(target).get(home).set('Cookie', cookie).expect(200);
  return { cookie, csrf: csrfIn(page.text), home };
}
