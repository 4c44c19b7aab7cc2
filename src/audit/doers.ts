import type { Request } from 'express';
import { keyPrincipal } from '../core/request-context.js';
import type { Doer } from './audit.js';

/** The operator (the application token) acting on a company, from the request's client address. */
export const byOperator = (req: Request, companyId: string): Doer => ({
  actor: { type: 'operator' },
  clientAddress: req.ip ?? '',
  companyId,
});

/** A partner's API key (by its prefix), in the trail of the company that owns it (a test key's too). */
export function byKey(req: Request): Doer {
  const { keyPrefix, ownerCompanyId } = keyPrincipal(req);
  return { actor: { type: 'key', prefix: keyPrefix }, clientAddress: req.ip ?? '', companyId: ownerCompanyId };
}

/** Whether the doer acted on its own company (live) or on its sandbox (test): the audit detail `world`. */
export const modeActedIn = (companyId: string, by: Doer): 'live' | 'test' =>
  companyId === by.companyId ? 'live' : 'test';
