import type { Router } from 'express';
import type { UserInput } from '../api-types.js';
import {
  acceptInvitation,
  checkPassword,
  hashPassword,
  invitationOf,
  PASSWORD_MAX,
  PASSWORD_MIN,
  type Account,
  type InvitationView,
} from '../companies/index.js';
import { refuse } from '../core/errors.js';
import { homeOf } from './access.js';
import type { PageDeps } from './deps.js';
import { Field, FormError } from './form.js';
import { Layout } from './layout.js';
import { render } from './render.js';
import type { FieldErrors } from './schema-check.js';
import { openSession } from './sign-in.js';

/** The path of an invitation's link (the token is its one secret; it is logged as the route's template only). */
export const invitationPath = (token: string) => `/console/invitations/${encodeURIComponent(token)}`;

function InvitationPage({
  invitation,
  token,
  errors,
}: {
  invitation: InvitationView;
  token: string;
  errors?: FieldErrors;
}) {
  return (
    <Layout title={`Join ${invitation.companyName}`}>
      <p>
        You are invited as <strong>{invitation.role}</strong> of {invitation.companyName}, with the e-mail{' '}
        {invitation.email}. The link works until {invitation.expiresAt}, once.
      </p>
      <form method="post" action={invitationPath(token)}>
        <FormError errors={errors} />
        {invitation.userName === null ? (
          <Field form="invitation" name="name" label="Your name" autocomplete="name" errors={errors} />
        ) : (
          <p>Your name in the company: {invitation.userName}</p>
        )}
        <input type="hidden" name="email" value={invitation.email} autocomplete="username" />
        <Field
          form="invitation"
          name="password"
          label="Choose a password"
          type="password"
          autocomplete="new-password"
          errors={errors}
        />
        <p id="invitation-password-rules">
          At least {PASSWORD_MIN} characters (at most {PASSWORD_MAX}); any characters, spaces too; not a well-known
          common password.
        </p>
        <button type="submit">Accept and sign in</button>
      </form>
    </Layout>
  );
}

/**
 * The invitation's link (GET …/invitations/:token) and its acceptance (POST): the invitee chooses a
 * password (and a name when the company has no user with the e-mail) and is signed in. Before sign-in:
 * the link is the invitee's credential (csrf.ts lets its form through with no session, from this origin only).
 */
export function invitationRoutes(router: Router, { db, forms }: Pick<PageDeps, 'db' | 'forms'>): void {
  router.get('/invitations/:token', async (req, res) => {
    const invitation = await invitationOf(db, req.params.token);
    render(res, 200, <InvitationPage invitation={invitation} token={req.params.token} />);
  });

  router.post('/invitations/:token', async (req, res) => {
    const { token } = req.params;
    const invitation = await invitationOf(db, token);
    const { name, password } = req.body as { name?: unknown; password?: unknown };
    const input = { name: invitation.userName ?? name, email: invitation.email };
    const result = await forms.act<UserInput, Account>(
      'UserInput',
      input,
      async ({ name }) => {
        if (typeof password !== 'string') throw refuse.badRequest('password is required');
        checkPassword(password);
        // Hashed before the transaction: no connection is held while argon2 works.
        return acceptInvitation(db, token, { name, passwordHash: await hashPassword(password) });
      },
      // The password's refusals are the 400s; a used, revoked or taken invitation belongs to the form.
      (refusal) => (refusal.status === 400 ? 'password' : ''),
    );
    if (!('value' in result))
      return render(
        res,
        result.status,
        <InvitationPage invitation={invitation} token={token} errors={result.errors} />,
      );
    await openSession(db, req, res, result.value);
    res.redirect(303, homeOf(result.value));
  });
}
