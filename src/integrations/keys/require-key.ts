import { performance } from 'node:perf_hooks';
import type { Request, RequestHandler } from 'express';
import { refuse } from '../../core/errors.js';
import { setPrincipal } from '../../core/request-context.js';
import type { KeyAuthenticator } from './api-key-cache.js';
import { isIssuedKeyShape } from './api-keys.js';

export interface RequireKeyOptions {
  /**
   * Requests whose key is decided by their own write, which finds the key at commit or writes nothing
   * and responds "invalid API key" (POST /reports/new). For them a cached key only names the company,
   * without waiting for the change feed's barrier: the statement decides again at commit anyway.
   */
  checkedAtCommit?: (req: Request) => boolean;
}

/**
 * Requires a valid X-API-KEY: where a partner request's key is decided, for every request but those
 * decided by their own write (checkedAtCommit). `keys` counts every revocation committed before the
 * request arrived (an ApiKeyCache waits for its change feed's barrier). The description asks for 400
 * (not 401) for a missing or invalid key, so this runs before the OpenAPI validator, whose own security
 * check would respond 401.
 */
export function requireApiKey(keys: KeyAuthenticator, { checkedAtCommit }: RequireKeyOptions = {}): RequestHandler {
  return async (req, res, next) => {
    const header = req.get('x-api-key');
    if (header === undefined || header.trim() === '') throw refuse.badRequest('missing X-API-KEY header');
    const key = header.trim();
    const since = performance.now();
    // A key of another shape (a typo, garbage, a flood of random strings) costs no lookup and no entry
    // in the key cache.
    if (!isIssuedKeyShape(key)) throw refuse.invalidKey();
    const held = checkedAtCommit?.(req) ? keys.heldValid?.(key) : undefined;
    const principal = held ?? (await keys.authenticate(key, since));
    if (!principal) throw refuse.invalidKey();
    setPrincipal(req, principal, since);
    // Every response to an accepted key says its mode (a test key used in production shows in logs).
    res.setHeader('Intake-Mode', principal.mode);
    next();
  };
}
