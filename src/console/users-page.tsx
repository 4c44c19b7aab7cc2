import type { Response } from 'express';
import type { Company } from '../api-types.js';
import {
  changeRole,
  invite,
  listInvitations,
  listPeople,
  removeAccount,
  revokeInvitation,
  ROLES,
  type Invitation,
  type Person,
  type Role,
} from '../companies/index.js';
import type { PageRouter } from './access.js';
import { companyOf, doerOf } from './company-param.js';
import type { PageDeps } from './deps.js';
import { CsrfField, Field, FormError, formValues } from './form.js';
import { invitationPath } from './invitation-page.js';
import { Layout } from './layout.js';
import { render } from './render.js';
import { flashOf, redirectWith } from './flash.js';
import { refusalOf, type FieldErrors } from './schema-check.js';

/** The people a page lists: the API's largest page. */
const PEOPLE_SHOWN = 100;

const usersOf = (company: Company) => `/console/companies/${company.id}/users`;

/** A labelled choice of role. */
function RoleSelect({ id, label, value }: { id: string; label: string; value?: string }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} name="role">
        {ROLES.map((role) => (
          <option key={role} value={role} selected={role === value}>
            {role}
          </option>
        ))}
      </select>
    </div>
  );
}

function PersonRow({ base, person }: { base: string; person: Person }) {
  const id = `role-${person.userId}`;
  return (
    <tr>
      <th scope="row">{person.name}</th>
      <td>{person.email}</td>
      <td>{person.role ?? 'No console account'}</td>
      <td>
        {person.role && (
          <>
            <form method="post" action={`${base}/${person.userId}/role`} class="inline">
              <CsrfField />
              <RoleSelect id={id} label={`Role of ${person.name}`} value={person.role} />
              <button type="submit">Change role</button>
            </form>{' '}
            <form method="post" action={`${base}/${person.userId}/remove`} class="inline">
              <CsrfField />
              <button type="submit">Remove</button>
            </form>
          </>
        )}
      </td>
    </tr>
  );
}

interface UsersProps {
  company: Company;
  people: Person[];
  invitations: Invitation[];
  /** A new invitation's link, shown on this answer only. */
  made?: { invitation: Invitation; link: string };
  values?: Record<string, string>;
  errors?: FieldErrors;
}

function UsersPage({ company, people, invitations, made, values, errors }: UsersProps) {
  const base = usersOf(company);
  return (
    <Layout title={`Users of ${company.name}`}>
      {made && (
        <section class="new-key" role="status">
          <h2>Invitation link</h2>
          <p>
            Send this link to {made.invitation.email} ({made.invitation.role}). It works once, until{' '}
            {made.invitation.expiresAt}, and is shown only now.
          </p>
          <code id="invitation-link">{made.link}</code>{' '}
          <button type="button" data-copy="invitation-link">
            Copy
          </button>
        </section>
      )}
      <FormError errors={errors} />
      <table>
        <caption>People and their console roles</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">E-mail</th>
            <th scope="col">Role</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {people.map((person) => (
            <PersonRow key={person.userId} base={base} person={person} />
          ))}
        </tbody>
      </table>
      <form method="post" action={`${base}/invitations`}>
        <h2>Invite</h2>
        <CsrfField />
        <Field form="invite" name="email" label="E-mail" type="email" value={values?.email} errors={errors} />
        <RoleSelect id="invite-role" label="Role" value={values?.role} />
        <button type="submit">Invite</button>
      </form>
      <h2>Open invitations</h2>
      {invitations.length === 0 ? (
        <p>No open invitations.</p>
      ) : (
        <ul>
          {invitations.map((invitation) => (
            <li key={invitation.id}>
              {invitation.email} ({invitation.role}), until {invitation.expiresAt}{' '}
              <form method="post" action={`${base}/invitations/${invitation.id}/revoke`} class="inline">
                <CsrfField />
                <button type="submit">Revoke</button>
              </form>
            </li>
          ))}
        </ul>
      )}
    </Layout>
  );
}

/**
 * The company's people (GET …/users): their roles, "Change role", "Remove" (the console account: the user
 * stays, an inspector of their reports), "Invite" (the link shown once), each open invitation's "Revoke".
 */
export function usersPage(router: PageRouter, { db, forms }: PageDeps): void {
  const show = async (
    res: Response,
    status: number,
    state: Omit<UsersProps, 'company' | 'people' | 'invitations'> = {},
  ) => {
    const company = companyOf(res.locals);
    const [people, invitations] = await Promise.all([
      listPeople(db, company.id, PEOPLE_SHOWN),
      listInvitations(db, company.id),
    ]);
    render(res, status, <UsersPage {...{ company, people, invitations, ...state }} />);
  };
  const done = (res: Response, outcome: string, action: () => Promise<unknown>) =>
    refusalOf(action).then((refused) =>
      refused
        ? show(res, refused.status, { errors: refused.errors })
        : redirectWith(db, res, usersOf(companyOf(res.locals)), { outcome }),
    );

  // The invitation just made (its link shown once) comes in the flash of the redirect after "Invite".
  router.get('/companies/:companyId/users', (_req, res) =>
    show(res, 200, flashOf(res)?.state as Pick<UsersProps, 'made'> | undefined),
  );

  router.post('/companies/:companyId/users/invitations', async (req, res) => {
    const { email, role } = req.body as { email?: unknown; role?: Role };
    const values = formValues(req.body);
    const refused = forms.checkField('UserInput', 'email', email);
    if (refused) return show(res, refused.status, { values, errors: refused.errors });
    let made: UsersProps['made'];
    const failed = await refusalOf(async () => {
      const { invitation, token } = await invite(db, companyOf(res.locals).id, email as string, role, doerOf(req, res));
      made = { invitation, link: `${req.protocol}://${req.host}${invitationPath(token)}` };
    });
    if (failed) return show(res, failed.status, { values, errors: failed.errors });
    await redirectWith(db, res, usersOf(companyOf(res.locals)), { state: { made } });
  });

  router.post('/companies/:companyId/users/invitations/:invitationId/revoke', (req, res) =>
    done(res, 'The invitation was revoked: its link no longer works.', () =>
      revokeInvitation(db, companyOf(res.locals).id, req.params.invitationId, doerOf(req, res)),
    ),
  );
  router.post('/companies/:companyId/users/:userId/role', (req, res) =>
    done(res, 'The role was changed; their sessions have ended.', () => {
      const { role } = req.body as { role?: unknown };
      return changeRole(db, companyOf(res.locals).id, req.params.userId, role, doerOf(req, res));
    }),
  );
  router.post('/companies/:companyId/users/:userId/remove', (req, res) =>
    done(res, 'The console account was removed; its sessions have ended.', () =>
      removeAccount(db, companyOf(res.locals).id, req.params.userId, doerOf(req, res)),
    ),
  );
}
