import type { Request, RequestHandler, Response, Router } from 'express';
import { accountCompany, signInAccount } from '../companies/index.js';
import { recordAudit } from '../audit/index.js';
import type { Pool } from '../db/pool.js';
import { sameSecret } from '../platform/http/app-token.js';
import { homeOf, type Principal } from './access.js';
import { Field, FormError } from './form.js';
import { Layout } from './layout.js';
import { render } from './render.js';
import type { FieldErrors } from './schema-check.js';
import { clearSessionCookie, sessionToken, setSessionCookie } from './session-cookie.js';
import { endSession, findSession, startSession, type Opener } from './sessions.js';
import { limitKeys, refund, takeAttempt } from './sign-in-limits.js';

interface SignInProps {
  errors?: FieldErrors;
  email?: string;
  /** The console page to return to after signing in (safeNext). */
  next?: string;
}

function SignInPage({ errors, email, next }: SignInProps) {
  const Next = () => (next ? <input type="hidden" name="next" value={next} /> : null);
  return (
    <Layout title="Sign in">
      <FormError errors={errors} />
      <form method="post" action="/console/sign-in">
        <Next />
        <Field form="sign-in" name="email" label="E-mail" type="email" autocomplete="username" value={email} />
        <Field
          form="sign-in"
          name="password"
          label="Password"
          type="password"
          autocomplete="current-password"
          errors={errors}
        />
        <button type="submit">Sign in</button>
      </form>
      <form method="post" action="/console/sign-in">
        <h2>The operator</h2>
        <Next />
        <Field
          form="sign-in"
          name="token"
          label="Application token"
          type="password"
          autocomplete="off"
          errors={errors}
        />
        <button type="submit">Sign in with the token</button>
      </form>
    </Layout>
  );
}

/** A console page to return to: a same-origin path under /console/ (never another site's), else undefined. */
export function safeNext(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 2000 || !value.startsWith('/console/')) return undefined;
  // Backslashes and control characters: some browsers read `/\evil.example` as another host.
  if (value.includes('\\') || [...value].some((c) => c < ' ')) return undefined;
  const base = 'http://console.invalid';
  const url = new URL(value, base);
  return url.origin === base && url.pathname.startsWith('/console/') ? url.pathname + url.search : undefined;
}

/** Reads the session of the request's cookie into res.locals (session, csrf) when it is valid. */
export function readSession(db: Pool, appToken: string): RequestHandler {
  return async (req, res, next) => {
    const token = sessionToken(req);
    const session = token === undefined ? undefined : await findSession(db, token, appToken);
    if (session) Object.assign(res.locals, { session, csrf: session.csrf });
    next();
  };
}

/** Every page after these asks for a session: without one, the sign-in page, which returns to the page asked for. */
export const requireSignIn: RequestHandler = (req, res, next) => {
  if (res.locals.session) return next();
  const back = req.method === 'GET' ? safeNext(req.originalUrl) : undefined;
  res.redirect(303, back ? `/console?${new URLSearchParams({ next: back })}` : '/console');
};

/** Starts a session for whoever signed in (ending the request's own, if any), its cookie on the response. */
export async function openSession(db: Pool, req: Request, res: Response, opener: Opener) {
  const old = sessionToken(req);
  if (old !== undefined) await endSession(db, old);
  const session = await startSession(db, opener);
  setSessionCookie(req, res, session.token);
  return session;
}

const WRONG_TOKEN = 'This is not the application token. Use the one the service printed (APP_TOKEN).';
const WRONG_PASSWORD = 'The e-mail or the password is not right.';
const tooMany = (seconds: number) =>
  `Too many failed sign-ins: try again in ${Math.ceil(seconds / 60)} minute(s), after ${new Date(Date.now() + seconds * 1000).toISOString().slice(11, 16)} UTC.`;

/** GET /console (the sign-in page, or home when signed in), POST /console/sign-in, POST /console/sign-out. */
export function signInRoutes(router: Router, { db, appToken }: { db: Pool; appToken: string }): void {
  router.get('/', (req, res) => {
    const next = safeNext(req.query.next);
    const { session } = res.locals as { session?: { principal: Principal } };
    if (session) return res.redirect(303, next ?? homeOf(session.principal));
    render(res, 200, <SignInPage next={next} />);
  });

  // The application token (the operator), or an e-mail and its password (a company's person); each try
  // counted against the account and the client address first (sign-in-limits.ts).
  router.post('/sign-in', async (req, res) => {
    const { token, email, password, next: asked } = req.body as Record<string, unknown>;
    const next = safeNext(asked);
    const asOperator = token !== undefined;
    const address = typeof email === 'string' ? email : '';
    // The operator's account is the token in force: a new token starts its count afresh.
    const keys = limitKeys(asOperator ? `operator ${appToken}` : address, req.ip);
    const { retryAfter } = await takeAttempt(db, keys);
    if (retryAfter !== undefined) {
      res.set('Retry-After', String(retryAfter));
      return render(res, 429, <SignInPage errors={{ '': tooMany(retryAfter) }} email={address} next={next} />);
    }
    if (asOperator) {
      if (typeof token !== 'string' || !sameSecret(token, appToken))
        return render(res, 401, <SignInPage errors={{ token: WRONG_TOKEN }} next={next} />);
      await refund(db, keys);
      await openSession(db, req, res, { appToken });
      return res.redirect(303, next ?? homeOf({ role: 'operator' }));
    }
    const account = typeof password === 'string' ? await signInAccount(db, address, password) : undefined;
    // A person's sign-ins go in their company's audit trail (the operator's belong to no company).
    const companyId = account?.companyId ?? (await accountCompany(db, address));
    const by = { actor: { type: 'person', email: address } as const, clientAddress: req.ip ?? '' };
    if (companyId)
      await recordAudit(db, { ...by, companyId }, { action: account ? 'sign_in.succeeded' : 'sign_in.failed' });
    if (!account)
      return render(res, 401, <SignInPage errors={{ password: WRONG_PASSWORD }} email={address} next={next} />);
    await refund(db, keys);
    await openSession(db, req, res, account);
    res.redirect(303, next ?? homeOf(account));
  });

  // Deletes the session, so that a kept copy of the cookie signs no one in.
  router.post('/sign-out', async (req, res) => {
    const token = sessionToken(req);
    if (token !== undefined) await endSession(db, token);
    clearSessionCookie(req, res);
    res.redirect(303, '/console');
  });
}
