import type { Response } from 'express';
import {
  changeRole,
  invite,
  pageInvitations,
  pagePeople,
  removeAccount,
  revokeInvitation,
  type Role,
} from '../companies/index.js';
import { DEFAULT_PAGE_LIMIT } from '../core/page-limit.js';
import type { PageRouter } from './access.js';
import { companyOf, doerOf } from './company-param.js';
import type { PageDeps } from './deps.js';
import { formValues } from './form.js';
import { invitationPath } from './invitation-routes.js';
import { render } from './render.js';
import { flashOf, redirectWith } from './flash.js';
import { listPositionsOf, type ListPositions } from './page-links.js';
import { refusalOf } from './schema-check.js';
import { USER_LISTS, UsersPage, usersOf, type UsersProps } from './users-view.js';

/** The rows of each list a page shows, as many as a page of the application API's lists by default. */
const PEOPLE_SHOWN = DEFAULT_PAGE_LIMIT;
const INVITATIONS_SHOWN = DEFAULT_PAGE_LIMIT;

type State = Omit<UsersProps, 'company' | 'people' | 'invitations' | 'positions'>;

/**
 * The company's people (GET …/users): their roles, "Change role", "Remove" (the console account: the user
 * stays, an inspector of their reports), "Invite" (the link shown once), each open invitation's "Revoke".
 * The people and the invitations are each paged both ways (`peopleAfter`, `invitationsBefore`: an id).
 */
export function usersRoutes(router: PageRouter, { db, forms }: PageDeps): void {
  const show = async (res: Response, status: number, state: State = {}, positions: ListPositions = {}) => {
    const company = companyOf(res.locals);
    const [people, invitations] = await Promise.all([
      pagePeople(db, company.id, PEOPLE_SHOWN, positions.people ?? {}),
      pageInvitations(db, company.id, INVITATIONS_SHOWN, positions.invitations ?? {}),
    ]);
    render(res, status, <UsersPage {...{ company, people, invitations, positions, ...state }} />);
  };
  const done = (res: Response, outcome: string, action: () => Promise<unknown>) =>
    refusalOf(action).then((refused) =>
      refused
        ? show(res, refused.status, { errors: refused.errors })
        : redirectWith(db, res, usersOf(companyOf(res.locals)), { outcome }),
    );

  // The invitation just made (its link shown once) comes in the flash of the redirect after "Invite".
  router.get('/companies/:companyId/users', (req, res) =>
    show(res, 200, flashOf(res)?.state as Pick<UsersProps, 'made'> | undefined, listPositionsOf(req.query, USER_LISTS)),
  );

  router.post('/companies/:companyId/users/invitations', async (req, res) => {
    const { email, role } = req.body as { email?: unknown; role?: Role };
    const values = formValues(req.body);
    const refused = await forms.checkField('UserInput', 'email', email);
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
