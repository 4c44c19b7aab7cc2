import { Router, type Response } from 'express';
import type { Company, CompanyInput, User, UserInput } from '../api-types.js';
import { refuse } from '../core/errors.js';
import { isUuid } from '../core/ids.js';
import type { Pool } from '../db/pool.js';
import { addInspector, companyExists, createCompany } from './companies.js';
import { companyNotFound } from './company-error-wording.js';

/** The application's path of one company; every route under it responds 404 for an unknown company. */
export const COMPANY = '/internal/companies/:companyId';

/**
 * For router.param('companyId', …) in each router of the application API: an unknown or malformed id
 * is 404 before any handler runs.
 */
export function requireCompany(db: Pool): Parameters<Router['param']>[1] {
  return async (_req, _res, next, companyId: string) => {
    if (!isUuid(companyId) || !(await companyExists(db, companyId))) throw refuse.notFound(companyNotFound(companyId));
    next();
  };
}

/** The application's companies and their users (inspectors). */
export function companiesRouter(db: Pool): Router {
  const router = Router();
  router.param('companyId', requireCompany(db));

  router.post('/internal/companies', async (req, res: Response<Company>) => {
    res.status(201).json(await createCompany(db, (req.body as CompanyInput).name));
  });

  router.post(`${COMPANY}/users`, async (req, res: Response<User>) => {
    const { name, email } = req.body as UserInput;
    res.status(201).json(await addInspector(db, req.params.companyId!, name, email));
  });

  return router;
}
