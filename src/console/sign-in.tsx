import type { RequestHandler, Router } from 'express';
import { sameSecret } from '../platform/http/app-token.js';
import type { Pool } from '../db/pool.js';
import { Field, FormError } from './form.js';
import { Layout } from './layout.js';
import { render } from './render.js';
import type { FieldErrors } from './schema-check.js';
import { clearSessionCookie, sessionToken, setSessionCookie } from './session-cookie.js';
import { endSession, findSession, startSession } from './sessions.js';

/** Where a signed-in person lands. */
const HOME = '/console/companies';

function SignInPage({ errors }: { errors?: FieldErrors }) {
  return (
    <Layout title="Sign in">
      <form method="post" action="/console/sign-in">
        <FormError errors={errors} />
        <Field
          form="sign-in"
          name="token"
          label="Application token"
          type="password"
          autocomplete="current-password"
          errors={errors}
        />
        <button type="submit">Sign in</button>
      </form>
    </Layout>
  );
}

/** Reads the session of the request's cookie into res.locals (session, csrf) when it is valid. */
export function readSession(db: Pool): RequestHandler {
  return async (req, res, next) => {
    const token = sessionToken(req);
    const session = token === undefined ? undefined : await findSession(db, token);
    if (session) Object.assign(res.locals, { session, csrf: session.csrf });
    next();
  };
}

/** Every page after these asks for a session: without one, the way is the sign-in page. */
export const requireSignIn: RequestHandler = (_req, res, next) => {
  if (!res.locals.session) return res.redirect(303, '/console');
  next();
};

/** GET /console (the sign-in page, or home when signed in), POST /console/sign-in, POST /console/sign-out. */
export function signInRoutes(router: Router, { db, appToken }: { db: Pool; appToken: string }): void {
  router.get('/', (_req, res) => {
    if (res.locals.session) return res.redirect(303, HOME);
    render(res, 200, <SignInPage />);
  });

  // The application token, compared as /internal compares it; a wrong one gets the page again (401).
  router.post('/sign-in', async (req, res) => {
    const sent = (req.body as { token?: unknown } | undefined)?.token;
    if (typeof sent !== 'string' || !sameSecret(sent, appToken)) {
      const message = 'This is not the application token. Use the one the service printed (APP_TOKEN).';
      return render(res, 401, <SignInPage errors={{ token: message }} />);
    }
    const session = await startSession(db);
    setSessionCookie(req, res, session.token);
    res.redirect(303, HOME);
  });

  // Deletes the session, so that a kept copy of the cookie signs no one in.
  router.post('/sign-out', async (req, res) => {
    const token = sessionToken(req);
    if (token !== undefined) await endSession(db, token);
    clearSessionCookie(req, res);
    res.redirect(303, '/console');
  });
}
