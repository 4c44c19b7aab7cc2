import { performance } from 'node:perf_hooks';

/**
 * What is known of a request beyond its HTTP: who it acts for (the accepted API key's company,
 * integration and key) and since when (for the caches' barriers). Set once by the key check, read by
 * the limits, the handlers and the request log. Keyed by the request object, so it goes with it.
 */
export interface KeyPrincipal {
  /** The company whose data the key reads and writes: the owner's own (live), or its sandbox's (test; a company of its own). */
  companyId: string;
  keyId: string;
  /** What of the key may be shown (the audit trail names a key by it). */
  keyPrefix: string;
  integrationId: string;
  /**
   * The inspection company that owns the key, live or test: companyId for a live key, the sandbox's
   * owner for a test key. Its users are the ones the key's reports name (its limits are companyId's).
   */
  ownerCompanyId: string;
  /** Live (the company's own reports) or test (its sandbox's). */
  mode: 'live' | 'test';
}

const accepted = new WeakMap<object, { principal: KeyPrincipal; since: number }>();

/** Records the request's accepted key, and `since`: when its key check began (performance.now()). */
export function setPrincipal(req: object, principal: KeyPrincipal, since: number): void {
  accepted.set(req, { principal, since });
}

/** The company and integration of the request's API key (set by the key check). */
export function keyPrincipal(req: object): KeyPrincipal {
  const entry = accepted.get(req);
  if (!entry) throw new Error('keyPrincipal() used on a route without requireApiKey');
  return entry.principal;
}

/**
 * A moment after the request arrived (performance.now()): changes committed before it must show in
 * what the request reads. A cache barrier sent after it serves the request (the key check's included).
 */
export function requestSince(req: object): number {
  return accepted.get(req)?.since ?? performance.now();
}

/** The company of the request's API key, or undefined when none was accepted (for logs; never throws). */
export function keyCompanyId(req: object): string | undefined {
  return accepted.get(req)?.principal.companyId;
}
