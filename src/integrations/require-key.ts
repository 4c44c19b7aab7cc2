import { performance } from 'node:perf_hooks';
import type { RequestHandler } from 'express';
import { badRequest } from '../core/errors.js';
import { setPrincipal } from '../core/request-context.js';
import type { KeyAuthenticator } from './api-key-cache.js';
import { isIssuedKeyShape } from './api-keys.js';

/**
 * Requires a valid X-API-KEY. The description asks for 400 (not 401) for a missing or invalid key,
 * so this runs before the OpenAPI validator, whose own security check would answer 401.
 */
export function requireApiKey(keys: KeyAuthenticator): RequestHandler {
  return async (req, res, next) => {
    const key = req.get('x-api-key');
    if (key === undefined || key.trim() === '') throw badRequest('missing X-API-KEY header');
    const since = performance.now();
    // A key of another shape (a typo, garbage, a flood of random strings) costs no lookup and no entry
    // in the key cache.
    const principal = isIssuedKeyShape(key.trim()) ? await keys.authenticate(key.trim(), since) : undefined;
    if (!principal) throw badRequest('invalid API key');
    setPrincipal(req, principal, since);
    // Every answer to an accepted key says which world it came from (a test key in production shows in logs).
    res.setHeader('Intake-Mode', principal.mode);
    next();
  };
}
