import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { sha256 } from '../core/sha256.js';
import type { Pool, Queryable } from '../db/pool.js';
import type { Session } from './sessions.js';

/**
 * What a form's action did, for the page its redirect names (Post/Redirect/Get): the page shows it
 * once, then it is gone. It is the server's record of the outcome: a page never reads one from its URL,
 * so a crafted link shows nothing that did not happen.
 */
export interface Flash {
  /** What the action did, in the page's status region (layout.tsx). */
  outcome?: string;
  /** What the page shows once besides (a new key, a revealed secret, the question after "Publish"): its own type. */
  state?: object;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The flash's key: from the session's token, which only the cookie holds (the table keeps its hash). */
const keyOf = (token: string) => Buffer.from(hkdfSync('sha256', token, '', 'console flash', 32));

function seal(token: string, flash: Flash): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyOf(token), iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(flash), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
}

function open(token: string, bytes: Buffer): Flash {
  const decipher = createDecipheriv('aes-256-gcm', keyOf(token), bytes.subarray(0, IV_BYTES));
  decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  const text = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  return JSON.parse(text.toString('utf8')) as Flash;
}

const sessionOf = (res: Response) => (res.locals as { session: Session }).session;

/**
 * Redirects a form's action with 303 to `path` (a page of the console, without query), keeping `flash` in
 * the session for that page's next GET. Every action that succeeds responds so, and so does one whose
 * outcome is a step to show (a question, a failed notification): a reload or Back then sends nothing again.
 */
export async function redirectWith(db: Queryable, res: Response, path: string, flash: Flash): Promise<void> {
  const { token } = sessionOf(res);
  await db.query('UPDATE console_sessions SET flash_path = $2, flash = $3 WHERE token_hash = $1', [
    sha256(token),
    path,
    seal(token, flash),
  ]);
  res.redirect(303, path);
}

/** The page's path as a redirect names it: the console's, without the query. */
const pathOf = (req: Request) => `${req.baseUrl}${req.path}`;

/**
 * On a GET of the page the session's flash is for, takes it (cleared in the same statement, so it is
 * shown once, whichever process serves the next request) into res.locals.flash.
 */
export function takeFlash(db: Pool): RequestHandler {
  return async (req, res, next) => {
    const session = sessionOf(res);
    if (req.method !== 'GET' || session.flashPath !== pathOf(req)) return next();
    const { rows } = await db.query<{ flash: Buffer | null }>(
      `UPDATE console_sessions s SET flash_path = NULL, flash = NULL
         FROM (SELECT token_hash, flash FROM console_sessions WHERE token_hash = $1 AND flash_path = $2 FOR UPDATE) old
        WHERE s.token_hash = old.token_hash
       RETURNING old.flash`,
      [sha256(session.token), pathOf(req)],
    );
    const sealed = rows[0]?.flash;
    if (sealed) res.locals.flash = open(session.token, sealed);
    next();
  };
}

/** The flash this page took (takeFlash), if any. */
export const flashOf = (res: Response) => (res.locals as { flash?: Flash }).flash;
