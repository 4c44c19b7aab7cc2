import type { Router } from 'express';
import type { Company } from '../api-types.js';
import { notFound } from '../core/errors.js';
import type { Pool } from '../db/pool.js';
import { companyNotFound, findCompany } from '../companies/index.js';
import { principalOf } from './access.js';

/** The company of a page's `:companyId`, found before its handler runs (routes read it with this). */
export const companyOf = (locals: Record<string, unknown>) => locals.company as Company;

/**
 * Every console route with `:companyId` answers the 404 page for an unknown company, and finds it in
 * res.locals. A company's person finds only their own: another company is unknown to them, by the same 404.
 */
export function companyParam(db: Pool): Parameters<Router['param']>[1] {
  return async (_req, res, next, companyId: string) => {
    const principal = principalOf(res.locals);
    const theirs = principal.role === 'operator' || principal.companyId === companyId;
    const company = theirs ? await findCompany(db, companyId) : undefined;
    if (!company) throw notFound(companyNotFound(companyId));
    res.locals.company = company;
    next();
  };
}
