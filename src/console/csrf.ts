import type { RequestHandler } from 'express';
import { refuse } from '../core/errors.js';
import { sameSecret } from '../platform/http/app-token.js';

/** The forms sent before a session exists (there is no token yet): signing in, accepting an invitation. */
const signedOutForm = (path: string) => path === '/sign-in' || /^\/invitations\/[^/]+$/.test(path);

/**
 * Refuses a request that may change something (not GET or HEAD) unless it comes from this origin's own
 * page: no cross-site Sec-Fetch-Site, no other Origin (`null` included), and the form's `_csrf` equal to
 * the session's token. SameSite=Strict alone is not enough: older browsers ignore it, and a sibling
 * subdomain is the same site.
 */
export const csrfProtection: RequestHandler = (req, res, next) => {
  if (req.method === 'GET' || req.method === 'HEAD') return next();
  if (req.get('sec-fetch-site') === 'cross-site') throw refuse.forbidden('the request came from another site');
  const origin = req.get('origin');
  if (origin !== undefined && origin !== `${req.protocol}://${req.host}`)
    throw refuse.forbidden('the request came from another origin');
  if (req.method === 'POST' && signedOutForm(req.path)) return next();
  const expected = (res.locals as { csrf?: string }).csrf;
  const sent = (req.body as { _csrf?: unknown } | undefined)?._csrf;
  if (expected === undefined || typeof sent !== 'string' || !sameSecret(sent, expected))
    throw refuse.forbidden('the form is out of date or not from this console: open the page again');
  next();
};
