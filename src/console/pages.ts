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
 * The console's signed-in pages, each module with the area whose roles may use its routes (access.ts AREAS). A new page is a module `(router, deps) => void` added here: it
 * registers GET routes that render(res, status, <Page/>) inside <Layout>, and POST actions that run
 * `deps.forms.act(schema, req.body, action, fieldOf)`. Post/Redirect/Get: an action that did something,
 * or whose outcome is a step to show, answers 303 to a GET page with what it did in the flash
 * (redirectWith, flash.ts), so a reload or Back sends nothing again. A refused form (400, 404, 409, 422)
 * is the one exception: the page is rendered again with the refusal's status, its field errors and the
 * values typed, since sending it again changes nothing either. An action that cannot be undone asks
 * first on a GET page of its own (confirm-view.tsx). The router has already checked the session and the
 * CSRF token of every POST (each form carries <CsrfField/>), found `:companyId` (companyOf) and taken
 * the flash of the page a GET asks for.
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
