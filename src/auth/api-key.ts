import { performance } from 'node:perf_hooks';
import type { Request, RequestHandler } from 'express';
import { badRequest } from '../http/errors.js';
import type { KeyAuthenticator } from './api-key-cache.js';
import { isIssuedKeyShape, type KeyPrincipal } from '../store/api-keys.js';

/** Each accepted request's principal, and when its key check began (for the caches' barriers). */
const principals = new WeakMap<Request, { principal: KeyPrincipal; since: number }>();

/**
 * Requires a valid X-API-KEY. The description asks for 400 (not 401) for a missing or invalid key,
 * so this runs before the OpenAPI validator, whose own security check would answer 401.
 */
export function requireApiKey(keys: KeyAuthenticator): RequestHandler {
  return async (req, _res, next) => {
    const key = req.get('x-api-key');
    if (key === undefined || key.trim() === '') throw badRequest('missing X-API-KEY header');
    const since = performance.now();
    // A key of another shape (a typo, garbage, a flood of random strings) costs no lookup and no entry
    // in the key cache.
    const principal = isIssuedKeyShape(key.trim()) ? await keys.authenticate(key.trim(), since) : undefined;
    if (!principal) throw badRequest('invalid API key');
    principals.set(req, { principal, since });
    next();
  };
}

/** The company and integration of the request's API key (set by requireApiKey). */
export function keyPrincipal(req: Request): KeyPrincipal {
  const accepted = principals.get(req);
  if (!accepted) throw new Error('keyPrincipal() used on a route without requireApiKey');
  return accepted.principal;
}

/**
 * A moment after the request arrived (performance.now()): changes committed before it must show in
 * what the request reads. A cache barrier sent after it serves the request (the key check's included).
 */
export function requestSince(req: Request): number {
  return principals.get(req)?.since ?? performance.now();
}

/** The company of the request's API key, or undefined when none was accepted (for logs; never throws). */
export function keyCompanyId(req: Request): string | undefined {
  return principals.get(req)?.principal.companyId;
}
