import type { RequestHandler, Router } from 'express';
import type { Role } from '../companies/index.js';
import { refuse } from '../core/errors.js';

/** Who a session is: the operator (the application token: every company), or one company's person. */
export type Principal =
  { role: 'operator' } | { role: Role; companyId: string; userId: string; name: string; email: string; epoch: number };

/**
 * The one place each role's reach is decided: every page module is registered for one area (pages.ts),
 * and each of its routes is guarded by the area's roles here (a 403 page for any other role). A company's
 * person never reaches another company at all: companyParam responds 404 for it, as for an unknown one.
 * The navigation shows only the areas the role may use (mayUse).
 */
export const AREAS = {
  /** The list of companies and "Create company". */
  companies: ['operator'],
  /** A company's page: its inspectors and "Add inspector". */
  company: ['operator', 'admin'],
  /** Settings > Integrations > REST API: keys, webhooks, deliveries, revoking. */
  restApi: ['operator', 'admin'],
  /** The company's people: invitations, roles, removal. */
  users: ['operator', 'admin'],
  /** The company's audit trail: who did what, when, from where. */
  audit: ['operator', 'admin'],
  /** The inbox and a report's page, "Start" and "Publish". */
  reports: ['operator', 'admin', 'inspector'],
  /** A person's own account: their password, "Sign out everywhere". */
  account: ['admin', 'inspector'],
} as const satisfies Record<string, readonly Principal['role'][]>;
export type Area = keyof typeof AREAS;

/** The signed-in principal of a request past requireSignIn. */
export const principalOf = (locals: Record<string, unknown>) => (locals.session as { principal: Principal }).principal;

export const mayUse = (principal: Principal, area: Area) =>
  (AREAS[area] as readonly Principal['role'][]).includes(principal.role);

/** Where a principal lands after signing in: the operator's companies, an admin's company, an inspector's inbox. */
export function homeOf(principal: Pick<Principal, 'role'> & { companyId?: string }): string {
  if (principal.role === 'operator') return '/console/companies';
  const company = `/console/companies/${principal.companyId}`;
  return principal.role === 'admin' ? company : `${company}/reports`;
}

/** What a page module registers its routes on: GET and POST, each guarded by the module's area. */
export type PageRouter = Pick<Router, 'get' | 'post'>;

/** The router's GET and POST with the area's guard before every handler (after router.param's). */
export function guarded(router: Router, area: Area): PageRouter {
  const guard: RequestHandler = (_req, res, next) => {
    const { role } = principalOf(res.locals);
    if (!mayUse(principalOf(res.locals), area)) throw refuse.forbidden(`an ${role} may not use this page`);
    next();
  };
  const withGuard =
    (method: 'get' | 'post') =>
    (path: string, ...handlers: RequestHandler[]) =>
      router[method](path, guard, ...handlers);
  return { get: withGuard('get') as Router['get'], post: withGuard('post') as Router['post'] };
}
