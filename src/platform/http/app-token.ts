import { timingSafeEqual } from 'node:crypto';
import { sha256 } from '../../core/sha256.js';
import type { RequestHandler } from 'express';
import { refuse } from '../../core/errors.js';

/**
 * Whether a secret the caller sent equals the expected one, in constant time. Both sides are hashed
 * first so timingSafeEqual compares equal lengths and the comparison reveals nothing about the
 * secret's length or content. The application token, the console's sign-in and its CSRF tokens use it.
 */
export function sameSecret(sent: string, expected: string): boolean {
  return timingSafeEqual(sha256(sent), sha256(expected));
}

/**
 * Requires `Authorization: Bearer <token>` for the application's internal routes (and operator
 * endpoints), compared by sameSecret.
 */
export function requireAppToken(token: string): RequestHandler {
  return (req, _res, next) => {
    const header = req.get('authorization');
    const match = header === undefined ? null : /^Bearer[ \t]+(\S+)\s*$/i.exec(header);
    if (!match) throw refuse.unauthorized('missing application token: send Authorization: Bearer <APP_TOKEN>');
    if (!sameSecret(match[1]!, token)) throw refuse.unauthorized('invalid application token');
    next();
  };
}
