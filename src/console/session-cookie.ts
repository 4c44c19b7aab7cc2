import { parse, serialize } from 'cookie';
import type { Request, RequestHandler, Response } from 'express';
import { refuse } from '../core/errors.js';
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

/** Whether a proxy in front says the client came over HTTPS (X-Forwarded-Proto or Forwarded: proto=). */
function forwardedOverHttps(req: Request): boolean {
  const proto = req.get('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  return proto === 'https' || /(^|[;,\s])proto="?https"?(?=$|[;,\s])/i.test(req.get('forwarded') ?? '');
}

/**
 * Refuses every console request that a proxy says came over HTTPS while the service does not trust
 * that proxy (TRUST_PROXY off): the session cookie would be set without Secure and `__Host-`, and
 * every form would be refused as coming from another origin (https:// is not the http:// the service
 * sees). A page saying what to set, rather than a cookie that a plain-HTTP request would carry.
 */
export const refuseUntrustedTls: RequestHandler = (req, _res, next) => {
  if (!req.secure && forwardedOverHttps(req))
    throw refuse.forbidden(
      'this console is reached over HTTPS through a proxy that the service does not trust, so it would set its ' +
        'session cookie without Secure: set TRUST_PROXY=true (docs/operating.md, "Behind a TLS proxy")',
    );
  next();
};
