import { performance } from 'node:perf_hooks';
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { badRequest, isInvalidKey, refuse } from '../core/errors.js';
import { setPrincipal } from '../core/request-context.js';
import type { KeyAuthenticator } from './api-key-cache.js';
import { isIssuedKeyShape } from './api-keys.js';

export interface RequireKeyOptions {
  /**
   * Requests that write only through a statement that finds their key at commit or writes nothing
   * (POST /reports/new: reports/write-statement.ts). Their key, when this process holds it as valid,
   * is taken at once, without waiting for the change feed's barrier: the statement refuses a key
   * revoked meanwhile, and a refusal of the request itself waits for the barrier first
   * (confirmKeyOnRefusal), so a revoked key never gets one in place of "invalid API key". A write saves
   * a round trip on the loop.
   */
  checkedAtCommit?: (req: Request) => boolean;
}

/** Requests whose key was taken without its barrier: how to confirm it, should the request be refused. */
const unconfirmed = new WeakMap<object, () => Promise<boolean>>();

/**
 * Requires a valid X-API-KEY. The description asks for 400 (not 401) for a missing or invalid key,
 * so this runs before the OpenAPI validator, whose own security check would answer 401.
 */
export function requireApiKey(keys: KeyAuthenticator, { checkedAtCommit }: RequireKeyOptions = {}): RequestHandler {
  return async (req, res, next) => {
    const header = req.get('x-api-key');
    if (header === undefined || header.trim() === '') throw badRequest('missing X-API-KEY header');
    const key = header.trim();
    const since = performance.now();
    // A key of another shape (a typo, garbage, a flood of random strings) costs no lookup and no entry
    // in the key cache.
    if (!isIssuedKeyShape(key)) throw refuse.invalidKey();
    const held = checkedAtCommit?.(req) ? keys.heldValid?.(key) : undefined;
    if (held) unconfirmed.set(req, async () => (await keys.authenticate(key, since)) !== undefined);
    const principal = held ?? (await keys.authenticate(key, since));
    if (!principal) throw refuse.invalidKey();
    setPrincipal(req, principal, since);
    // Every answer to an accepted key says which world it came from (a test key in production shows in logs).
    res.setHeader('Intake-Mode', principal.mode);
    next();
  };
}

/**
 * A refusal of the request itself (a 4xx but 429), which a revoked key must not get in place of its
 * own. Answers that ask for a retry later (429, 5xx) are given as they are, at once: they tell nothing
 * of the report, and the retry meets the key's refusal. A database frozen meanwhile must not make them
 * wait for a confirmation on top of the wait that produced them.
 */
function aboutTheRequest(err: unknown): boolean {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500 && status !== 429 && !isInvalidKey(err);
}

/**
 * Before a refusal of a request whose key was taken without its barrier (checkedAtCommit): the key is
 * confirmed, and a key revoked before the request arrived is answered "invalid API key", as it would
 * have been before anything else. When the database cannot tell, the refusal stands.
 */
export const confirmKeyOnRefusal: ErrorRequestHandler = async (err, req, _res, next) => {
  const confirm = unconfirmed.get(req);
  unconfirmed.delete(req);
  const valid = confirm && aboutTheRequest(err) ? await confirm().catch(() => true) : true;
  next(valid ? err : refuse.invalidKey());
};
