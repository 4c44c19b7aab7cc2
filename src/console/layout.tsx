import type { ComponentChildren } from 'preact';
import { CsrfField } from './form.js';
import { useCsrf } from './render.js';

/**
 * htmx may not evaluate code nor add styles or scripts: the CSP forbids inline ones, and nothing needs them.
 * An answer that refuses (a failed test delivery is 502) is swapped in too: it is the page to show.
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

/** Every page: a skip link, the header (signed in: "Companies" and "Sign out"), one main with one h1. */
export function Layout({ title, children }: { title: string; children?: ComponentChildren }) {
  const signedIn = useCsrf() !== undefined;
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
          {signedIn && (
            <nav aria-label="Console">
              <a href="/console/companies">Companies</a>
              <form method="post" action="/console/sign-out" class="inline">
                <CsrfField />
                <button type="submit">Sign out</button>
              </form>
            </nav>
          )}
        </header>
        <main id="main">
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
  );
}
