import { randomBytes } from 'node:crypto';
import type { Account, Role } from '../companies/index.js';
import { sha256 } from '../core/sha256.js';
import type { Queryable } from '../db/pool.js';
import type { Principal } from './access.js';
import { SIGN_IN_WINDOW_SECONDS } from './sign-in-limits.js';

/** How long a sign-in lasts: a working day. */
export const SESSION_SECONDS = 8 * 60 * 60;

export interface Session {
  /** The random token the cookie carries (only its hash is stored). */
  token: string;
  /** The synchronizer token every state-changing form of the session carries in `_csrf`. */
  csrf: string;
  principal: Principal;
  /** The page its flash is for, when it holds one (flash.ts). */
  flashPath?: string;
}

const randomToken = () => randomBytes(32).toString('base64url');

/**
 * Whose a new session is: a person's account (with its epoch), or the operator's, kept as the sha256 of the
 * application token it was opened with, so that a changed token ends it.
 */
export type Opener = Pick<Account, 'companyId' | 'userId' | 'epoch'> | { appToken: string };

export async function startSession(db: Queryable, opener: Opener): Promise<Pick<Session, 'token' | 'csrf'>> {
  const session = { token: randomToken(), csrf: randomToken() };
  const person = 'userId' in opener ? opener : undefined;
  await db.query(
    `INSERT INTO console_sessions (token_hash, csrf_token, expires_at, company_id, user_id, account_epoch, app_token_hash)
     VALUES ($1, $2, clock_timestamp() + make_interval(secs => $3), $4, $5, $6, $7)`,
    [
      sha256(session.token),
      session.csrf,
      SESSION_SECONDS,
      person?.companyId ?? null,
      person?.userId ?? null,
      person?.epoch ?? null,
      'appToken' in opener ? sha256(opener.appToken) : null,
    ],
  );
  return session;
}

interface SessionRow {
  csrf: string;
  flashPath: string | null;
  companyId: string | null;
  userId: string | null;
  role: Principal['role'] | null;
  name: string;
  email: string;
  epoch: number;
}

/**
 * The session of a cookie's token, unless it is unknown, signed out or expired, or no longer its
 * holder's: a person's account removed or its epoch moved on (role or password changed, "Sign out
 * everywhere"), the operator's application token changed.
 */
export async function findSession(db: Queryable, token: string, appToken: string): Promise<Session | undefined> {
  const { rows } = await db.query<SessionRow>(
    `SELECT s.csrf_token AS csrf, s.flash_path AS "flashPath", s.company_id AS "companyId", s.user_id AS "userId",
            a.role, u.name, u.email, s.account_epoch AS epoch
       FROM console_sessions s
       LEFT JOIN user_accounts a
              ON a.company_id = s.company_id AND a.user_id = s.user_id AND a.sessions_epoch = s.account_epoch
       LEFT JOIN users u ON u.company_id = a.company_id AND u.id = a.user_id
      WHERE s.token_hash = $1 AND s.expires_at > clock_timestamp() AND (s.app_token_hash = $2 OR a.role IS NOT NULL)`,
    [sha256(token), sha256(appToken)],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { csrf, flashPath, companyId, userId, role, name, email, epoch } = row;
  const principal: Principal =
    userId === null ? { role: 'operator' } : { role: role as Role, companyId: companyId!, userId, name, email, epoch };
  return { token, csrf, principal, flashPath: flashPath ?? undefined };
}

export async function endSession(db: Queryable, token: string): Promise<void> {
  await db.query('DELETE FROM console_sessions WHERE token_hash = $1', [sha256(token)]);
}

/**
 * Deletes the sessions past their expiry or no longer their person's, and the sign-in failures whose
 * window has ended (the serving process's sweep calls it).
 */
export async function sweepExpiredSessions(db: Queryable): Promise<void> {
  await db.query(
    `DELETE FROM console_sessions s
      WHERE s.expires_at <= clock_timestamp()
         OR (s.user_id IS NOT NULL AND NOT EXISTS (
               SELECT 1 FROM user_accounts a
                WHERE a.company_id = s.company_id AND a.user_id = s.user_id AND a.sessions_epoch = s.account_epoch))`,
  );
  await db.query(
    'DELETE FROM console_sign_in_failures WHERE window_start <= clock_timestamp() - make_interval(secs => $1)',
    [SIGN_IN_WINDOW_SECONDS],
  );
}
