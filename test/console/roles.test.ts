import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { consoleRouter } from '../../src/console/index.js';
import { ERROR_WORDING } from '../../src/error-wording.js';
import { api, appDeps, newCompany, pool, reportInput } from '../support/harness.js';
import { consoleClient, newPerson, signIn, signInAs } from '../support/console.js';
import { auth } from '../support/webhooks.js';

type Who = 'operator' | 'admin' | 'inspector';

/**
 * Who may use each console route, written out here as the issue states it (src/console/access.ts decides
 * it): a route that matches no line fails the test, so a new route is given its roles here too.
 */
const EXPECTED: [RegExp, Who[]][] = [
  [/^\/companies$/, ['operator']],
  [/^\/companies\/:companyId(\/inspectors)?$/, ['operator', 'admin']],
  [/^\/companies\/:companyId\/integrations\/rest-api/, ['operator', 'admin']],
  [/^\/companies\/:companyId\/users/, ['operator', 'admin']],
  [/^\/companies\/:companyId\/audit/, ['operator', 'admin']],
  [/^\/companies\/:companyId\/reports/, ['operator', 'admin', 'inspector']],
  [/^\/account/, ['admin', 'inspector']],
];
/** The routes that need no session: the sign-in, its page, signing out, an invitation's link. */
const OPEN = ['GET /', 'POST /sign-in', 'POST /sign-out', 'GET /invitations/:token', 'POST /invitations/:token'];

interface RouteLayer {
  route?: { path: string; methods: Record<string, boolean>; stack: { handle: { name: string } }[] };
}

/** Every route of the console's router, with whether the area guard stands first in it. */
function consoleRoutes(): { method: string; path: string; guarded: boolean }[] {
  const deps = appDeps(pool());
  const router = consoleRouter({
    ...deps,
    wording: ERROR_WORDING.fields,
    publishing: { notifier: deps.notifier, policy: deps.retryPolicy },
    // Only the routes are listed: no form is checked.
    validator: { check: () => Promise.resolve(undefined), example: () => ({}) },
  }) as unknown as { stack: RouteLayer[] };
  return router.stack.flatMap(({ route }) =>
    route
      ? Object.keys(route.methods).map((method) => ({
          method: method.toUpperCase(),
          path: route.path,
          guarded: route.stack[0]?.handle.name === 'guard',
        }))
      : [],
  );
}

const ROUTES = consoleRoutes().filter((r) => !r.path.startsWith('/assets/'));

describe('console: every role × every console route', () => {
  let own: { companyId: string; reportId: string };
  let other: { companyId: string; reportId: string };
  const sessions: Partial<Record<Who, { cookie: string; csrf: string }>> = {};

  const companyWithReport = async () => {
    const { companyId } = await newCompany();
    const res = await api().post(`/internal/companies/${companyId}/reports`).set(auth).send(reportInput()).expect(201);
    return { companyId, reportId: res.body.id as string };
  };

  const url = (path: string, company: { companyId: string; reportId: string }) =>
    `/console${path
      .replace(':companyId', company.companyId)
      .replace(':reportId', company.reportId)
      .replace(':eventId', 'msg_unknown')
      .replace(/:\w+/g, () => randomUUID())}`;

  const ask = (who: Who, method: string, target: string) => {
    const { cookie, csrf } = sessions[who]!;
    const req =
      method === 'GET' ? consoleClient().get(target) : consoleClient().post(target).type('form').send({ _csrf: csrf });
    return req.set('Cookie', cookie);
  };

  before(async () => {
    own = await companyWithReport();
    other = await companyWithReport();
    sessions.operator = await signIn();
    for (const role of ['admin', 'inspector'] as const)
      sessions[role] = await signInAs((await newPerson(own.companyId, role)).email);
  });

  it('guards every route but the sign-in’s and the invitations’ with its area, and each has its expected roles', () => {
    expect(ROUTES.filter((r) => !r.guarded).map((r) => `${r.method} ${r.path}`)).to.deep.equal(OPEN);
    for (const { path } of ROUTES.filter((r) => r.guarded))
      expect(
        EXPECTED.filter(([pattern]) => pattern.test(path)),
        path,
      ).to.have.length(1);
  });

  it('shows each role only its own areas in the navigation', async () => {
    const nav = async (who: Who, target: string) => {
      const page = await ask(who, 'GET', target).expect(200);
      return [...page.text.matchAll(/<nav aria-label="Console">(.*?)<\/nav>/gs)].map((m) => m[1]!)[0]!;
    };
    const operator = await nav('operator', '/console/companies');
    expect(operator).to.include('>Companies<').and.not.include('>Users<');
    const admin = await nav('admin', `/console/companies/${own.companyId}`);
    for (const label of ['>Company<', '>Reports<', '>Users<', '>REST API<', '>Account<'])
      expect(admin).to.include(label);
    expect(admin).to.not.include('>Companies<');
    const inspector = await nav('inspector', `/console/companies/${own.companyId}/reports`);
    expect(inspector).to.include('>Reports<').and.include('>Account<');
    for (const label of ['>Companies<', '>Company<', '>Users<', '>REST API<']) expect(inspector).to.not.include(label);
  });

  for (const who of ['operator', 'admin', 'inspector'] as const)
    it(`answers the ${who} as the table says: allowed, 403 (own company), 404 (another company)`, async () => {
      // "Sign out everywhere" last: it ends the session (the tests above use it first).
      const routes = ROUTES.filter((r) => r.guarded).sort(
        (a, b) => Number(a.path.endsWith('everywhere')) - Number(b.path.endsWith('everywhere')),
      );
      for (const { method, path } of routes) {
        const allowed = EXPECTED.find(([pattern]) => pattern.test(path))![1].includes(who);
        const what = `${who} ${method} ${path}`;
        const res = await ask(who, method, url(path, own));
        if (allowed) expect(res.status, what).to.not.be.oneOf([401, 403, 500]);
        else expect(res.status, what).to.equal(403);
        if (allowed) expect(res.text, what).to.not.include(`company ${own.companyId} not found`);
        if (who === 'operator' || !path.includes(':companyId')) continue;
        // Another company is unknown to a company's person: the 404 of an unknown company, whatever the role.
        const across = await ask(who, method, url(path, other));
        expect(across.status, `${what} across companies`).to.equal(404);
        expect(across.text, what).to.include(`company ${other.companyId} not found`);
      }
    });
});
