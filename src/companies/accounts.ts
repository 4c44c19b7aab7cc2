import type { Pool, Queryable } from '../db/pool.js';
import { withAudit, type Doer } from '../audit/index.js';
import { refuse } from '../core/errors.js';
import { isUuid } from '../core/ids.js';
import { quoted } from '../core/quoted.js';
import { keysetOrder, keysetPage, type Page, type PageAt } from '../db/keyset.js';
import { checkPassword, hashPassword, passwordMatches } from './passwords.js';

/** A company person's role in the console: `admin` runs everything of the company, `inspector` its reports. */
export const ROLES = ['admin', 'inspector'] as const;
export type Role = (typeof ROLES)[number];

/** Refuses (400) a role that is none of ROLES. */
export function checkRole(role: unknown): asserts role is Role {
  if (!ROLES.includes(role as Role)) throw refuse.badRequest(`role must be one of ${ROLES.join(', ')}`);
}

/** A user of the company and their console role (null: no console account). */
export interface Person {
  userId: string;
  name: string;
  email: string;
  role: Role | null;
}

/** An account as a session holds it: whose it is, their role, and the epoch its sessions must carry. */
export interface Account {
  companyId: string;
  userId: string;
  role: Role;
  epoch: number;
}

const noAccount = (userId: string) => refuse.notFound(`user ${quoted(userId)} has no console account`);

/** A page of the company's users by name, each with their role (db/keyset.ts: `at` is a user's id). */
export function pagePeople(db: Queryable, companyId: string, limit: number, at: PageAt): Promise<Page<Person>> {
  return keysetPage(at, limit, async (cursor, backwards, rows) => {
    const { beyond, order } = keysetOrder('ASC', backwards);
    const { rows: people } = await db.query<Person>(
      `SELECT u.id AS "userId", u.name, u.email, a.role
         FROM users u LEFT JOIN user_accounts a ON a.company_id = u.company_id AND a.user_id = u.id
        WHERE u.company_id = $1
          AND ($3::uuid IS NULL OR (lower(u.name), u.id) ${beyond}
               (SELECT lower(name), id FROM users WHERE company_id = $1 AND id = $3))
        ORDER BY lower(u.name) ${order}, u.id ${order} LIMIT $2`,
      [companyId, rows, cursor],
    );
    return people;
  });
}

/**
 * The account of the e-mail when the password is its own; undefined otherwise, after the same work
 * (an unknown e-mail is checked against a hash of no one's password), so the response time tells nothing.
 */
export async function signInAccount(db: Queryable, email: string, password: string): Promise<Account | undefined> {
  const { rows } = await db.query<Account & { passwordHash: string }>(
    `SELECT company_id AS "companyId", user_id AS "userId", role, sessions_epoch AS epoch,
            password_hash AS "passwordHash"
       FROM user_accounts WHERE lower(email) = lower($1)`,
    [email],
  );
  const account = rows[0];
  if (!(await passwordMatches(account?.passwordHash, password)) || !account) return undefined;
  const { passwordHash: _, ...signedIn } = account;
  return signedIn;
}

/** The refusal of a change that would leave the company with nobody to run it. */
const LAST_ADMIN = 'a company always keeps an admin: make another person admin first';

/**
 * Refuses (409) a change that takes away `userId`'s admin role when no other admin would be left. The
 * company's admins are locked first, so that of two changes at once (two admins demoting each other)
 * the second counts after the first has committed, and sees one admin fewer.
 */
async function keepAnAdmin(db: Queryable, companyId: string, userId: string): Promise<void> {
  const { rows } = await db.query<{ userId: string }>(
    `SELECT user_id AS "userId" FROM user_accounts WHERE company_id = $1 AND role = 'admin'
      ORDER BY user_id FOR UPDATE`,
    [companyId],
  );
  if (rows.length === 1 && rows[0]!.userId === userId) throw refuse.conflict(LAST_ADMIN);
}

/**
 * Changes a person's role; a change ends their sessions (their epoch moves on), and goes in the audit
 * trail. 404 without an account; 409 for the company's last admin (keepAnAdmin).
 */
export async function changeRole(pool: Pool, companyId: string, userId: string, role: unknown, by: Doer) {
  checkRole(role);
  await withAudit(
    pool,
    by,
    async (db) => {
      if (role !== 'admin') await keepAnAdmin(db, companyId, userId);
      const { rows } = await db.query<{ email: string }>(
        `UPDATE user_accounts SET role = $3, sessions_epoch = sessions_epoch + (role <> $3)::int
          WHERE company_id = $1 AND user_id = $2 RETURNING email`,
        [companyId, isUuid(userId) ? userId : null, role],
      );
      if (!rows[0]) throw noAccount(userId);
      return rows[0].email;
    },
    (email) => ({ action: 'user.role_changed', subject: email, details: { role } }),
  );
}

/**
 * Removes a person's console account (their sessions end with it), in the audit trail; the user stays,
 * an inspector of reports. 409 for the company's last admin (keepAnAdmin).
 */
export async function removeAccount(pool: Pool, companyId: string, userId: string, by: Doer): Promise<void> {
  await withAudit(
    pool,
    by,
    async (db) => {
      await keepAnAdmin(db, companyId, userId);
      const { rows } = await db.query<{ email: string }>(
        'DELETE FROM user_accounts WHERE company_id = $1 AND user_id = $2 RETURNING email',
        [companyId, isUuid(userId) ? userId : null],
      );
      if (!rows[0]) throw noAccount(userId);
      return rows[0].email;
    },
    (email) => ({ action: 'user.removed', subject: email }),
  );
}

/** The company of the e-mail's account, if any (for the audit trail of a failed sign-in). */
export async function accountCompany(db: Queryable, email: string): Promise<string | undefined> {
  const { rows } = await db.query<{ companyId: string }>(
    'SELECT company_id AS "companyId" FROM user_accounts WHERE lower(email) = lower($1)',
    [email],
  );
  return rows[0]?.companyId;
}

/** Ends every session of the person ("Sign out everywhere"); returns the epoch a new session carries. */
export async function endSessions(
  db: Queryable,
  { companyId, userId }: Pick<Account, 'companyId' | 'userId'>,
): Promise<number> {
  const { rows } = await db.query<{ epoch: number }>(
    `UPDATE user_accounts SET sessions_epoch = sessions_epoch + 1
      WHERE company_id = $1 AND user_id = $2 RETURNING sessions_epoch AS epoch`,
    [companyId, userId],
  );
  if (!rows[0]) throw noAccount(userId);
  return rows[0].epoch;
}

/**
 * Changes the person's password when `current` is theirs (undefined otherwise; 400 for a password the
 * rules refuse): every session of theirs ends; returns the epoch a new one carries.
 */
export async function changePassword(
  db: Queryable,
  account: Pick<Account, 'companyId' | 'userId'>,
  current: string,
  password: string,
): Promise<number | undefined> {
  const { rows } = await db.query<{ hash: string }>(
    'SELECT password_hash AS hash FROM user_accounts WHERE company_id = $1 AND user_id = $2',
    [account.companyId, account.userId],
  );
  if (!(await passwordMatches(rows[0]?.hash, current))) return undefined;
  checkPassword(password);
  const hashed = await hashPassword(password);
  const { rows: changed } = await db.query<{ epoch: number }>(
    `UPDATE user_accounts SET password_hash = $3, sessions_epoch = sessions_epoch + 1
      WHERE company_id = $1 AND user_id = $2 RETURNING sessions_epoch AS epoch`,
    [account.companyId, account.userId, hashed],
  );
  if (!changed[0]) throw noAccount(account.userId);
  return changed[0].epoch;
}
