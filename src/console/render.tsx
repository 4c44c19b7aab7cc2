import type { Response } from 'express';
import { createContext, type ComponentChildren } from 'preact';
import { useContext } from 'preact/hooks';
import { renderToString } from 'preact-render-to-string';
import type { Principal } from './access.js';

/** The signed-in session's CSRF token, for the layout's "Sign out" and every form's hidden `_csrf` field. */
const CsrfContext = createContext<string | undefined>(undefined);
/** Who is signed in, for the navigation and the links a page shows (access.ts mayUse). */
const PrincipalContext = createContext<Principal | undefined>(undefined);

/** The CSRF token of the page being rendered; undefined when no one is signed in. */
export const useCsrf = () => useContext(CsrfContext);
/** The principal of the page being rendered; undefined when no one is signed in. */
export const usePrincipal = () => useContext(PrincipalContext);

/**
 * Answers a page: preact renders it to a string, escaping every text and attribute value, so a value
 * from a partner or a form is shown as text. The session's CSRF token and principal come from res.locals.
 */
export function render(res: Response, status: number, page: ComponentChildren): void {
  const { csrf, session } = res.locals as { csrf?: string; session?: { principal: Principal } };
  const html = renderToString(
    <CsrfContext.Provider value={csrf}>
      <PrincipalContext.Provider value={session?.principal}>{page}</PrincipalContext.Provider>
    </CsrfContext.Provider>,
  );
  res.status(status).type('html').send(`<!doctype html>${html}`);
}
