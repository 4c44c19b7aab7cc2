import { performance } from 'node:perf_hooks';
import type { RequestHandler } from 'express';
import { badRequest, refuse } from '../core/errors.js';
import { setPrincipal } from '../core/request-context.js';
import type { KeyAuthenticator } from './api-key-cache.js';
import { isIssuedKeyShape } from './api-keys.js';

/**
 * Requires a valid X-API-KEY: the one place that decides whether a partner request's key is valid.
 * `keys` counts every revocation committed before the request arrived (an ApiKeyCache waits for its
 * change feed's barrier). A key revoked later, while the request is being served, is refused by the
 * write it would make: a create's statement finds its key at commit (FOR KEY SHARE) or writes nothing.
 * The description asks for 400 (not 401) for a missing or invalid key, so this runs before the OpenAPI
 * validator, whose own security check would answer 401.
 */
export function requireApiKey(keys: KeyAuthenticator): RequestHandler {
  return async (req, res, next) => {
    const header = req.get('x-api-key');
    if (header === undefined || header.trim() === '') throw badRequest('missing X-API-KEY header');
    const key = header.trim();
    const since = performance.now();
    // A key of another shape (a typo, garbage, a flood of random strings) costs no lookup and no entry
    // in the key cache.
    if (!isIssuedKeyShape(key)) throw refuse.invalidKey();
    const principal = await keys.authenticate(key, since);
    if (!principal) throw refuse.invalidKey();
    setPrincipal(req, principal, since);
    // Every answer to an accepted key says which world it came from (a test key in production shows in logs).
    res.setHeader('Intake-Mode', principal.mode);
    next();
  };
}
