import type { Area } from './access.js';
import { accountPage } from './account-page.js';
import { auditPage } from './audit-page.js';
import { companyPages } from './companies-page.js';
import { companyPage } from './company-page.js';
import type { PageRoutes } from './deps.js';
import { restApiPage } from './rest-api-page.js';
import { reportPages } from './report-actions.js';
import { reportsInbox } from './reports-inbox.js';
import { usersPage } from './users-page.js';

/**
 * The console's signed-in pages, each module with the area whose roles may use its routes (access.ts AREAS). A new page is a module `(router, deps) => void` added here: it
 * registers GET routes that render(res, status, <Page/>) inside <Layout>, and POST actions that run
 * `deps.forms.act(schema, req.body, action, fieldOf)` then answer 303 to a GET page, or render the page
 * again with the refusal's status and field errors. The router has already checked the session and the
 * CSRF token of every POST (each form carries <CsrfField/>) and found `:companyId` (companyOf).
 */
export const PAGES: [Area, PageRoutes][] = [
  ['companies', companyPages],
  ['company', companyPage],
  ['restApi', restApiPage],
  ['users', usersPage],
  ['audit', auditPage],
  ['reports', reportsInbox],
  ['reports', reportPages],
  ['account', accountPage],
];
