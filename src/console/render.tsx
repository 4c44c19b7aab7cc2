import type { Response } from 'express';
import { createContext, type ComponentChildren } from 'preact';
import { useContext } from 'preact/hooks';
import { renderToString } from 'preact-render-to-string';
import type { Principal } from './access.js';
import { flashOf } from './flash.js';

/**
 * What every page's layout needs of the request: the signed-in session's CSRF token (for "Sign out" and
 * every form's hidden `_csrf` field), who is signed in (the navigation, access.ts mayUse), and the outcome
 * of the action that led here (its flash).
 */
const PageContext = createContext<{ csrf?: string; principal?: Principal; outcome?: string }>({});

/** The CSRF token of the page being rendered; undefined when no one is signed in. */
export const useCsrf = () => useContext(PageContext).csrf;
/** The principal of the page being rendered; undefined when no one is signed in. */
export const usePrincipal = () => useContext(PageContext).principal;
/** What the action that led to this page did (the flash's outcome), for its status region. */
export const useOutcome = () => useContext(PageContext).outcome;

/**
 * Sends a page: preact renders it to a string, escaping every text and attribute value, so a value
 * from a partner or a form is shown as text. The session's CSRF token, principal and flash come from res.locals.
 */
export function render(res: Response, status: number, page: ComponentChildren): void {
  const { csrf, session } = res.locals as { csrf?: string; session?: { principal: Principal } };
  const context = { csrf, principal: session?.principal, outcome: flashOf(res)?.outcome };
  const html = renderToString(<PageContext.Provider value={context}>{page}</PageContext.Provider>);
  res.status(status).type('html').send(`<!doctype html>${html}`);
}
