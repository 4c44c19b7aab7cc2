import type { Response } from 'express';
import { changePassword, endSessions } from '../companies/index.js';
import { HttpError } from '../core/errors.js';
import { principalOf, type PageRouter, type Principal } from './access.js';
import type { PageDeps } from './deps.js';
import { CsrfField, Field, FormError } from './form.js';
import { Layout } from './layout.js';
import { render } from './render.js';
import { redirectWith } from './flash.js';
import type { FieldErrors } from './schema-check.js';
import { clearSessionCookie, sessionToken } from './session-cookie.js';
import { endSession } from './sessions.js';
import { openSession } from './sign-in.js';

type Person = Exclude<Principal, { role: 'operator' }>;

function AccountPage({ person, errors }: { person: Person; errors?: FieldErrors }) {
  return (
    <Layout title="Your account">
      <p>
        {person.name} ({person.email}), {person.role}.
      </p>
      <form method="post" action="/console/account/password">
        <h2>Change password</h2>
        <CsrfField />
        <FormError errors={errors} />
        <Field
          form="account"
          name="current"
          label="Current password"
          type="password"
          autocomplete="current-password"
          errors={errors}
        />
        <Field
          form="account"
          name="password"
          label="New password"
          type="password"
          autocomplete="new-password"
          errors={errors}
        />
        <button type="submit">Change password</button>
      </form>
      <form method="post" action="/console/account/sign-out-everywhere">
        <h2>Sessions</h2>
        <p>Ends every session of yours, in every browser, this one too.</p>
        <CsrfField />
        <button type="submit">Sign out everywhere</button>
      </form>
    </Layout>
  );
}

/**
 * A person's own account: "Change password" (every other session ends; this browser gets a new one) and
 * "Sign out everywhere".
 */
export function accountRoutes(router: PageRouter, { db }: PageDeps): void {
  const person = (res: Response) => principalOf(res.locals) as Person;

  router.get('/account', (_req, res) => render(res, 200, <AccountPage person={person(res)} />));

  router.post('/account/password', async (req, res) => {
    const { current, password } = req.body as { current?: unknown; password?: unknown };
    const me = person(res);
    const refuse = (status: number, errors: FieldErrors) =>
      render(res, status, <AccountPage person={me} errors={errors} />);
    if (typeof current !== 'string' || typeof password !== 'string')
      return refuse(400, { '': 'current and password are required' });
    let epoch: number | undefined;
    try {
      epoch = await changePassword(db, me, current, password);
    } catch (err) {
      if (!(err instanceof HttpError) || err.status >= 500) throw err;
      return refuse(err.status, { password: err.message });
    }
    if (epoch === undefined) return refuse(400, { current: 'This is not your current password.' });
    const session = await openSession(db, req, res, { ...me, epoch });
    Object.assign(res.locals, { session: { ...session, principal: { ...me, epoch } }, csrf: session.csrf });
    await redirectWith(db, res, '/console/account', {
      outcome: 'Password changed; every other session of yours has ended.',
    });
  });

  router.post('/account/sign-out-everywhere', async (req, res) => {
    await endSessions(db, person(res));
    const token = sessionToken(req);
    if (token !== undefined) await endSession(db, token);
    clearSessionCookie(req, res);
    res.redirect(303, '/console');
  });
}
