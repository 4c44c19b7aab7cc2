import { parse, serialize } from 'cookie';
import type { Request, Response } from 'express';
import { SESSION_SECONDS } from './sessions.js';

/**
 * The session cookie: HttpOnly, SameSite=Strict, expiring with the session. Over HTTPS (req.secure,
 * which follows the app's trust proxy setting) it is Secure and named with the `__Host-` prefix, so a
 * sibling subdomain cannot plant one; that prefix requires Path=/, so only the plain-HTTP cookie (local
 * development) is limited to /console.
 */
const cookieName = (req: Request) => (req.secure ? '__Host-console_session' : 'console_session');
const cookiePath = (req: Request) => (req.secure ? '/' : '/console');

/** The session token the request's cookie carries, if any. */
export function sessionToken(req: Request): string | undefined {
  const header = req.get('cookie');
  return header === undefined ? undefined : parse(header)[cookieName(req)];
}

function writeCookie(req: Request, res: Response, value: string, maxAge: number): void {
  const options = { httpOnly: true, sameSite: 'strict', secure: req.secure, path: cookiePath(req), maxAge } as const;
  res.append('Set-Cookie', serialize(cookieName(req), value, options));
}

export const setSessionCookie = (req: Request, res: Response, token: string) =>
  writeCookie(req, res, token, SESSION_SECONDS);

/** Tells the browser to drop the cookie (signing out also deletes the session, so a kept copy is useless). */
export const clearSessionCookie = (req: Request, res: Response) => writeCookie(req, res, '', 0);
