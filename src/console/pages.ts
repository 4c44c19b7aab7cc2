import type { Area } from './access.js';
import { accountRoutes } from './account-routes.js';
import { auditRoutes } from './audit-routes.js';
import { companiesRoutes } from './companies-routes.js';
import { companyRoutes } from './company-routes.js';
import type { PageRoutes } from './deps.js';
import { restApiRoutes } from './rest-api-routes.js';
import { reportActionRoutes } from './report-actions.js';
import { reportsInboxRoutes } from './reports-inbox.js';
import { usersRoutes } from './users-routes.js';

/**
 * The console's signed-in route modules, each with the area whose roles may use it (access.ts AREAS).
 * Actions follow Post/Redirect/Get (redirectWith, flash.ts) so a reload sends nothing again; only a
 * refused form is rendered again with its errors. The router has already checked the session and CSRF.
 */
export const PAGES: [Area, PageRoutes][] = [
  ['companies', companiesRoutes],
  ['company', companyRoutes],
  ['restApi', restApiRoutes],
  ['users', usersRoutes],
  ['audit', auditRoutes],
  ['reports', reportsInboxRoutes],
  ['reports', reportActionRoutes],
  ['account', accountRoutes],
];
