import { Router } from 'express';
import { guarded } from './access.js';
import { assetsRouter } from './assets.js';
import { companyParam } from './company-param.js';
import { csrfProtection } from './csrf.js';
import type { ConsoleDeps } from './deps.js';
import { errorPages, notFoundPage } from './error-pages.js';
import { takeFlash } from './flash.js';
import { formBody } from './form-body.js';
import { consoleHeaders } from './headers.js';
import { invitationRoutes } from './invitation-routes.js';
import { PAGES } from './pages.js';
import { formChecker } from './schema-check.js';
import { refuseUntrustedTls } from './session-cookie.js';
import { readSession, requireSignIn, signInRoutes } from './sign-in.js';

/**
 * The console, mounted at /console before the API's middleware: its own headers, assets, form parsing,
 * session and CSRF check, then the sign-in and the invitations' links, then the signed-in pages (PAGES),
 * each route guarded by its area's roles (access.ts), with the flash their GET takes (flash.ts), then HTML
 * error pages.
 */
export function consoleRouter(deps: ConsoleDeps): Router {
  const router = Router();
  router.use(consoleHeaders, assetsRouter());
  router.use(refuseUntrustedTls, formBody);
  router.use(readSession(deps.db, deps.appToken), csrfProtection);
  const pageDeps = { ...deps, forms: formChecker(deps.wording, deps.validator) };
  signInRoutes(router, deps);
  invitationRoutes(router, pageDeps);
  router.use(requireSignIn, takeFlash(deps.db));
  router.param('companyId', companyParam(deps.db));
  for (const [area, pages] of PAGES) pages(guarded(router, area), pageDeps);
  router.use(notFoundPage, errorPages(deps.logger));
  return router;
}
