import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { refuse } from '../../core/errors.js';

const sha256 = (value: string) => createHash('sha256').update(value).digest();

/**
 * Requires `Authorization: Bearer <token>` for the application's internal routes (and operator
 * endpoints). Both sides are hashed first so timingSafeEqual compares equal lengths and the
 * comparison reveals nothing about the token's length or content.
 */
export function requireAppToken(token: string): RequestHandler {
  const expected = sha256(token);
  return (req, _res, next) => {
    const header = req.get('authorization');
    const match = header === undefined ? null : /^Bearer[ \t]+(\S+)\s*$/i.exec(header);
    if (!match) throw refuse.unauthorized('missing application token: send Authorization: Bearer <APP_TOKEN>');
    if (!timingSafeEqual(sha256(match[1]!), expected)) throw refuse.unauthorized('invalid application token');
    next();
  };
}
