import type { Request, Response, Router } from 'express';
import type { Doer } from '../audit/index.js';
import type { Company } from '../api-types.js';
import { refuse } from '../core/errors.js';
import type { Pool } from '../db/pool.js';
import { companyNotFound, findCompany } from '../companies/index.js';
import { principalOf } from './access.js';

/** The company of a page's `:companyId`, found before its handler runs (routes read it with this). */
export const companyOf = (locals: Record<string, unknown>) => locals.company as Company;

/**
 * Who acts, for the audit trail: the signed-in person (by e-mail) or the operator, from the request's
 * client address, in the trail of the page's company (its own for its sandbox's too).
 */
export function doerOf(req: Request, res: Response): Doer {
  const principal = principalOf(res.locals);
  return {
    actor: principal.role === 'operator' ? { type: 'operator' } : { type: 'person', email: principal.email },
    clientAddress: req.ip ?? '',
    companyId: companyOf(res.locals).id,
  };
}

/**
 * Every console route with `:companyId` responds with the 404 page for an unknown company, and finds it in
 * res.locals. A company's person finds only their own: another company is unknown to them, by the same 404.
 */
export function companyParam(db: Pool): Parameters<Router['param']>[1] {
  return async (_req, res, next, companyId: string) => {
    const principal = principalOf(res.locals);
    const theirs = principal.role === 'operator' || principal.companyId === companyId;
    const company = theirs ? await findCompany(db, companyId) : undefined;
    if (!company) throw refuse.notFound(companyNotFound(companyId));
    res.locals.company = company;
    next();
  };
}
