import { randomBytes } from 'node:crypto';
import { sha256 } from '../core/sha256.js';
import type { Queryable } from '../db/pool.js';

/** How long a sign-in lasts: a working day. */
export const SESSION_SECONDS = 8 * 60 * 60;

export interface Session {
  /** The random token the cookie carries (only its hash is stored). */
  token: string;
  /** The synchronizer token every state-changing form of the session carries in `_csrf`. */
  csrf: string;
  /** The page its flash is for, when it holds one (flash.ts). */
  flashPath?: string;
}

const randomToken = () => randomBytes(32).toString('base64url');

export async function startSession(db: Queryable): Promise<Session> {
  const session = { token: randomToken(), csrf: randomToken() };
  await db.query(
    `INSERT INTO console_sessions (token_hash, csrf_token, expires_at)
     VALUES ($1, $2, clock_timestamp() + make_interval(secs => $3))`,
    [sha256(session.token), session.csrf, SESSION_SECONDS],
  );
  return session;
}

/** The session of a cookie's token, unless it is unknown, signed out or expired. */
export async function findSession(db: Queryable, token: string): Promise<Session | undefined> {
  const { rows } = await db.query<{ csrf_token: string; flash_path: string | null }>(
    'SELECT csrf_token, flash_path FROM console_sessions WHERE token_hash = $1 AND expires_at > clock_timestamp()',
    [sha256(token)],
  );
  const row = rows[0];
  return row && { token, csrf: row.csrf_token, flashPath: row.flash_path ?? undefined };
}

export async function endSession(db: Queryable, token: string): Promise<void> {
  await db.query('DELETE FROM console_sessions WHERE token_hash = $1', [sha256(token)]);
}

/** Deletes the sessions past their expiry (the serving process's sweep calls it). */
export async function sweepExpiredSessions(db: Queryable): Promise<void> {
  await db.query('DELETE FROM console_sessions WHERE expires_at <= clock_timestamp()');
}
