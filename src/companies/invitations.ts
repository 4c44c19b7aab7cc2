import { randomBytes } from 'node:crypto';
import type { PoolClient } from 'pg';
import type { Pool, Queryable } from '../db/pool.js';
import { withTransaction } from '../db/pool.js';
import { keysetOrder, keysetPage, type Page, type PageAt } from '../db/keyset.js';
import { withAudit, type Doer } from '../audit/index.js';
import { refuse } from '../core/errors.js';
import { isUuid } from '../core/ids.js';
import { quoted } from '../core/quoted.js';
import { sha256 } from '../core/sha256.js';
import { checkRole, type Account, type Role } from './accounts.js';
import { addUser } from './companies.js';

/** How long an invitation link can be used: three days, time for it to be passed on and opened. */
export const INVITATION_HOURS = 72;

export interface Invitation {
  id: string;
  email: string;
  role: Role;
  expiresAt: string;
}

/** An invitation as its link finds it: for whom, and whether it can still be used. */
export interface InvitationView extends Invitation {
  companyId: string;
  companyName: string;
  /** The name of the company's user with the e-mail, when there is one (the account becomes theirs). */
  userName: string | null;
  state: 'usable' | 'used' | 'revoked' | 'expired';
}

const COLUMNS = `i.id, i.email, i.role, to_char(i.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS "expiresAt"`;

/**
 * Invites an e-mail to the company's console with a role: returns the invitation and its one-time token,
 * which only this result shows (only its sha256 is kept). 409 when the company's user with the e-mail
 * already has an account.
 */
export async function invite(
  pool: Pool | PoolClient,
  companyId: string,
  email: string,
  role: unknown,
  by: Doer,
): Promise<{ invitation: Invitation; token: string }> {
  checkRole(role);
  const token = `inv_${randomBytes(32).toString('base64url')}`;
  const invitation = await withAudit(
    pool,
    by,
    (db) => insertInvitation(db, companyId, email, role, token),
    ({ role }) => ({ action: 'user.invited', subject: email, details: { role } }),
  );
  return { invitation, token };
}

async function insertInvitation(db: Queryable, companyId: string, email: string, role: Role, token: string) {
  const { rows } = await db.query<Invitation>(
    `WITH i AS (
       INSERT INTO user_invitations (company_id, email, role, token_hash, expires_at)
       SELECT $1, $2, $3, $4, clock_timestamp() + make_interval(hours => $5)
        WHERE NOT EXISTS (SELECT 1 FROM users u JOIN user_accounts a ON a.company_id = u.company_id AND a.user_id = u.id
                           WHERE u.company_id = $1 AND lower(u.email) = lower($2))
       RETURNING *)
     SELECT ${COLUMNS} FROM i`,
    [companyId, email, role, sha256(token), INVITATION_HOURS],
  );
  if (!rows[0]) throw refuse.conflict(`${quoted(email)} already has a console account in this company`);
  return rows[0];
}

/**
 * A page of the company's invitations still usable, newest first (db/keyset.ts: `at` is an invitation's
 * id; one used, revoked or expired since still marks its position).
 */
export function pageInvitations(
  db: Queryable,
  companyId: string,
  limit: number,
  at: PageAt,
): Promise<Page<Invitation>> {
  return keysetPage(at, limit, async (cursor, backwards, rows) => {
    const { beyond, order } = keysetOrder('DESC', backwards);
    const { rows: invitations } = await db.query<Invitation>(
      `SELECT ${COLUMNS} FROM user_invitations i
        WHERE company_id = $1 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > clock_timestamp()
          AND ($3::uuid IS NULL OR (created_at, id) ${beyond}
               (SELECT created_at, id FROM user_invitations WHERE company_id = $1 AND id = $3))
        ORDER BY created_at ${order}, id ${order} LIMIT $2`,
      [companyId, rows, cursor],
    );
    return invitations;
  });
}

/** Revokes a usable invitation of the company: its link no longer works. 404 otherwise. */
export async function revokeInvitation(pool: Pool, companyId: string, id: string, by: Doer): Promise<void> {
  await withAudit(
    pool,
    by,
    async (db) => {
      const { rows } = await db.query<{ email: string; role: string }>(
        `UPDATE user_invitations SET revoked_at = clock_timestamp()
          WHERE company_id = $1 AND id = $2 AND used_at IS NULL AND revoked_at IS NULL
            AND expires_at > clock_timestamp()
          RETURNING email, role`,
        [companyId, isUuid(id) ? id : null],
      );
      if (!rows[0]) throw refuse.notFound(`invitation ${quoted(id)} not found, or no longer usable`);
      return rows[0];
    },
    ({ email, role }) => ({ action: 'user.invitation_revoked', subject: email, details: { role } }),
  );
}

async function findInvitation(db: Queryable, token: string, lock = ''): Promise<InvitationView | undefined> {
  const { rows } = await db.query<InvitationView>(
    `SELECT ${COLUMNS}, i.company_id AS "companyId", c.name AS "companyName",
            (SELECT name FROM users u WHERE u.company_id = i.company_id AND lower(u.email) = lower(i.email)) AS "userName",
            CASE WHEN i.used_at IS NOT NULL THEN 'used' WHEN i.revoked_at IS NOT NULL THEN 'revoked'
                 WHEN i.expires_at <= clock_timestamp() THEN 'expired' ELSE 'usable' END AS state
       FROM user_invitations i JOIN companies c ON c.id = i.company_id
      WHERE i.token_hash = $1 ${lock}`,
    [sha256(token)],
  );
  return rows[0];
}

/** The invitation if it can be used; refused otherwise: 404 unknown, 410 used, revoked or expired. */
function usable(invitation: InvitationView | undefined): InvitationView {
  if (!invitation) throw refuse.notFound('there is no such invitation: check the link, or ask for a new one');
  if (invitation.state === 'usable') return invitation;
  const what = invitation.state === 'expired' ? 'not used in time' : invitation.state;
  throw refuse.gone(`this invitation was ${what}: ask for a new one`);
}

/** The usable invitation of a link's token (see usable). */
export const invitationOf = async (db: Queryable, token: string) => usable(await findInvitation(db, token));

/**
 * Accepts the invitation: the company's user with its e-mail (made with `name` when there is none) gets an
 * account with the invitation's role and the password's hash, and the link is used up, in one transaction.
 * 409 when the e-mail already has an account (in any company: an e-mail signs in to one company).
 */
export async function acceptInvitation(
  pool: Pool,
  token: string,
  { name, passwordHash }: { name: string; passwordHash: string },
): Promise<Account> {
  return withTransaction(pool, async (db) => {
    const invitation = usable(await findInvitation(db, token, 'FOR UPDATE OF i'));
    const { companyId, email, role } = invitation;
    if (invitation.userName === null) await addUser(db, companyId, name, email);
    const { rows } = await db.query<Account>(
      `INSERT INTO user_accounts (company_id, user_id, email, role, password_hash)
       SELECT company_id, id, email, $3, $4 FROM users WHERE company_id = $1 AND lower(email) = lower($2)
       ON CONFLICT DO NOTHING
       RETURNING company_id AS "companyId", user_id AS "userId", role, sessions_epoch AS epoch`,
      [companyId, email, role, passwordHash],
    );
    if (!rows[0]) throw refuse.conflict(`${quoted(email)} already has a console account`);
    await db.query('UPDATE user_invitations SET used_at = clock_timestamp() WHERE company_id = $1 AND id = $2', [
      companyId,
      invitation.id,
    ]);
    return rows[0];
  });
}
