import type { ComponentChildren } from 'preact';
import { mayUse, type Area, type Principal } from './access.js';
import { CsrfField } from './form.js';
import { useOutcome, usePrincipal } from './render.js';

/**
 * htmx may not evaluate code nor add styles or scripts: the CSP forbids inline ones, and nothing needs them.
 * A refusal (a failed test delivery is 502) is swapped in too: it is the page to show.
 */
const HTMX_CONFIG = JSON.stringify({
  includeIndicatorStyles: false,
  allowEval: false,
  allowScriptTags: false,
  responseHandling: [
    { code: '204', swap: false },
    { code: '[2345]..', swap: true },
  ],
});

/** The header's links: each shown to the roles that may use its area (access.ts). */
const NAV: { area: Area; label: string; path: (companyId: string) => string }[] = [
  { area: 'companies', label: 'Companies', path: () => '/console/companies' },
  { area: 'company', label: 'Company', path: (id) => `/console/companies/${id}` },
  { area: 'reports', label: 'Reports', path: (id) => `/console/companies/${id}/reports` },
  { area: 'users', label: 'Users', path: (id) => `/console/companies/${id}/users` },
  { area: 'audit', label: 'Audit trail', path: (id) => `/console/companies/${id}/audit` },
  { area: 'restApi', label: 'REST API', path: (id) => `/console/companies/${id}/integrations/rest-api` },
  { area: 'account', label: 'Account', path: () => '/console/account' },
];

/** The operator's links lead to every company; a person's to their own company's areas. */
function navLinks(principal: Principal) {
  if (principal.role === 'operator')
    return NAV.filter((link) => link.area === 'companies').map((l) => [l.label, l.path('')]);
  return NAV.filter((link) => mayUse(principal, link.area)).map((link) => [link.label, link.path(principal.companyId)]);
}

/**
 * Every page: a skip link, the header (signed in: the role's links and "Sign out"), one main with one h1,
 * and under it the status region saying what the action that led here did (focused, so it is read and in
 * view), unless the page focuses a part of its own (`focusOwn`: the question after "Publish").
 */
export function Layout({
  title,
  focusOwn = false,
  children,
}: {
  title: string;
  focusOwn?: boolean;
  children?: ComponentChildren;
}) {
  const principal = usePrincipal();
  const outcome = useOutcome();
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="htmx-config" content={HTMX_CONFIG} />
        <title>{`${title} · Inspection Report Intake`}</title>
        <link rel="icon" href="/console/assets/favicon.svg" type="image/svg+xml" />
        <link rel="stylesheet" href="/console/assets/console.css" />
        <script src="/console/assets/htmx.min.js" defer />
        <script src="/console/assets/console.js" defer />
      </head>
      <body>
        <a class="skip-link" href="#main">
          Skip to content
        </a>
        <header class="site-header">
          <span class="site-name">Inspection Report Intake</span>
          {principal && (
            <nav aria-label="Console">
              {navLinks(principal).map(([label, href]) => (
                <a key={href} href={href}>
                  {label}
                </a>
              ))}
              <form method="post" action="/console/sign-out" class="inline">
                <CsrfField />
                <button type="submit">Sign out</button>
              </form>
            </nav>
          )}
        </header>
        <main id="main">
          <h1>{title}</h1>
          <div role="status" class="outcome" id="outcome" tabindex={-1} autofocus={outcome !== undefined && !focusOwn}>
            {outcome && <p>{outcome}</p>}
          </div>
          {children}
        </main>
      </body>
    </html>
  );
}

/**
 * A table that scrolls sideways inside its own box when it is wider than the screen, so that its words
 * never break mid-word and the page itself never scrolls sideways. The box can take the keyboard's focus
 * (to scroll it by keys), named as its table.
 */
export function TableScroll({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-scroll" role="region" aria-label={label} tabindex={0}>
      {children}
    </div>
  );
}
