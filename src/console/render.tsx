import type { Response } from 'express';
import { createContext, type ComponentChildren } from 'preact';
import { useContext } from 'preact/hooks';
import { renderToString } from 'preact-render-to-string';

/** The signed-in session's CSRF token, for the layout's "Sign out" and every form's hidden `_csrf` field. */
const CsrfContext = createContext<string | undefined>(undefined);

/** The CSRF token of the page being rendered; undefined when no one is signed in. */
export const useCsrf = () => useContext(CsrfContext);

/**
 * Answers a page: preact renders it to a string, escaping every text and attribute value, so a value
 * from a partner or a form is shown as text. The session's CSRF token comes from res.locals.
 */
export function render(res: Response, status: number, page: ComponentChildren): void {
  const csrf = (res.locals as { csrf?: string }).csrf;
  const html = renderToString(<CsrfContext.Provider value={csrf}>{page}</CsrfContext.Provider>);
  res.status(status).type('html').send(`<!doctype html>${html}`);
}
