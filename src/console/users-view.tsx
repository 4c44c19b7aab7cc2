import type { Company } from '../api-types.js';
import { ROLES, type Invitation, type Person } from '../companies/index.js';
import type { Page } from '../db/keyset.js';
import { CsrfField, Field, FormError } from './form.js';
import { Layout } from './layout.js';
import { neighbours, PageLinks, listPositionHref, type ListPositions } from './page-links.js';
import type { FieldErrors } from './schema-check.js';

/** The Users page's view: its people a page at a time with their roles, "Invite", the open invitations. */

export const usersOf = (company: Company) => `/console/companies/${company.id}/users`;

/** The page's lists, as their positions are named in its query (page-links.ts). */
export const USER_LISTS = ['people', 'invitations'] as const;

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

export interface UsersProps {
  company: Company;
  people: Page<Person>;
  invitations: Page<Invitation>;
  /** Where each list's page is (what its links keep of the other list's). */
  positions: ListPositions;
  /** A new invitation's link, shown on this response only. */
  made?: { invitation: Invitation; link: string };
  values?: Record<string, string>;
  errors?: FieldErrors;
}

function PeopleTable({ company, people, positions }: UsersProps) {
  const base = usersOf(company);
  const href = (list: string) => (at: object) => listPositionHref(base, positions, list, at, `${list}-heading`);
  return (
    <>
      <h2 id="people-heading">People</h2>
      <table>
        <caption>People and their console roles, by name</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">E-mail</th>
            <th scope="col">Role</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {people.rows.map((person) => (
            <PersonRow key={person.userId} base={base} person={person} />
          ))}
        </tbody>
      </table>
      <PageLinks
        what={['person', 'people']}
        words={['Previous', 'Next']}
        {...neighbours(people, (person) => person.userId, href('people'))}
      />
    </>
  );
}

function InvitationList({ company, invitations, positions }: UsersProps) {
  const base = usersOf(company);
  const href = (at: object) => listPositionHref(base, positions, 'invitations', at, 'invitations-heading');
  return (
    <>
      <h2 id="invitations-heading">Open invitations</h2>
      {invitations.rows.length === 0 ? (
        <p>No open invitations.</p>
      ) : (
        <>
          <ul>
            {invitations.rows.map((invitation) => (
              <li key={invitation.id}>
                {invitation.email} ({invitation.role}), until {invitation.expiresAt}{' '}
                <form method="post" action={`${base}/invitations/${invitation.id}/revoke`} class="inline">
                  <CsrfField />
                  <button type="submit">Revoke</button>
                </form>
              </li>
            ))}
          </ul>
          <PageLinks what={['invitation', 'invitations']} {...neighbours(invitations, (i) => i.id, href)} />
        </>
      )}
    </>
  );
}

export function UsersPage(props: UsersProps) {
  const { company, made, values, errors } = props;
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
      <PeopleTable {...props} />
      <form method="post" action={`${base}/invitations`}>
        <h2>Invite</h2>
        <CsrfField />
        <Field form="invite" name="email" label="E-mail" type="email" value={values?.email} errors={errors} />
        <RoleSelect id="invite-role" label="Role" value={values?.role} />
        <button type="submit">Invite</button>
      </form>
      <InvitationList {...props} />
    </Layout>
  );
}
