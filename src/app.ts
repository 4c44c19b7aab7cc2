import express, { type Express, type RequestHandler } from 'express';
import type { Pool } from './db/pool.js';
import { auditRouter } from './audit/index.js';
import { companiesRouter, requireCompany } from './companies/index.js';
import { consoleRouter } from './console/index.js';
import {
  authRouter,
  eventsRouter,
  integrationsRouter,
  requireApiKey,
  sandboxRouter,
  type KeyAuthenticator,
  type Notifier,
  type RetryPolicy,
} from './integrations/index.js';
import {
  applicationReportsRouter,
  partnerResponseKind,
  reportsRouter,
  writesCheckTheirKey,
  type ReportReads,
  type ReportWriter,
} from './reports/index.js';
import { ERROR_WORDING } from './error-wording.js';
import { errorHandler, unknownRoute } from './platform/http/error-handler.js';
import type { Logger } from './platform/observability/logger.js';
import { httpMetrics } from './platform/observability/metrics.js';
import { requireAppToken } from './platform/http/app-token.js';
import { refuseUnmetExpectations } from './platform/http/expect.js';
import { jsonBody } from './platform/http/json-body.js';
import { closeAfterUnreadBody } from './platform/http/unread-body.js';
import { originFormTarget } from './platform/http/request-target.js';
import { rejectUnstorableText } from './platform/http/no-nul.js';
import { noStore } from './platform/http/no-store.js';
import { headAsGet } from './platform/http/head-as-get.js';
import { requestLogger } from './platform/observability/request-log.js';
import { securityHeaders } from './platform/http/security-headers.js';
import { bodyValidator } from './platform/http/body-validator.js';
import { openApiValidator } from './platform/http/openapi-validator.js';
import { warmValidators } from './platform/http/warm-validators.js';
import { operationsRouter } from './platform/observability/operations.js';
import { docsRouter } from './platform/http/docs.js';
import { jsonOnce } from './platform/http/json-once.js';
import { partnerLimitsMiddleware, type PartnerLimits } from './platform/limits/partner-limits.js';

/** The console's sessions past their expiry go by the serving process's sweep. */
export { sweepExpiredSessions } from './console/index.js';

export interface AppDeps {
  db: Pool;
  logger: Logger;
  validateResponses: boolean;
  /**
   * The validator's handlers for validateResponses, when already built: compiling the document's schemas is
   * the costly part, and apps of one process can share them (the tests' do). Unset: the app builds its own.
   */
  validator?: RequestHandler[];
  /** The application token guarding /internal (Authorization: Bearer). */
  appToken: string;
  /** Delivers the reportPublished webhook (tests inject one that trusts their local receiver). */
  notifier: Notifier;
  /** How events are retried after a failed attempt (WEBHOOK_RETRY_SCHEDULE, WEBHOOK_DISABLE_AFTER). */
  retryPolicy: RetryPolicy;
  /** Where API keys are checked: an ApiKeyCache (serving-process.ts builds it on the change feed). */
  apiKeys: KeyAuthenticator;
  /** Where the partner API reads reports: a ReportCache (serving-process.ts builds it on the change feed). */
  reports: ReportReads;
  /** Where reports are created and updated: a ReportWriter (batches of writes). */
  writes: ReportWriter;
  /** The base URL the published documents name (PUBLIC_BASE_URL); unset: the origin each was requested at. */
  publicBaseUrl?: string;
  /** Trust X-Forwarded-Proto/Host (and -For) from the peer: the service runs behind a proxy that sets them. */
  trustProxy?: boolean;
  /** Each key's request budget and each company's share of the process (partner API). */
  limits: PartnerLimits;
}

/** Each app's validator handlers, and whether they are being built (its /readyz then responds 503). */
const validators = new WeakMap<Express, { handlers: RequestHandler[]; building: boolean }>();

/**
 * The app's validator handlers, kept for warmUp and /readyz, and the same handlers as the check of the
 * console's forms, each turned into the body of the operation it stands for.
 */
function validationOf(app: Express, { validateResponses, validator }: AppDeps) {
  const validation = { handlers: validator ?? openApiValidator({ validateResponses }), building: false };
  validators.set(app, validation);
  return { validation, validator: bodyValidator(app, validation.handlers) };
}

/**
 * Builds every validator of the app's document now (platform/http/warm-validators.ts), as serving-process.ts does
 * once it listens when WARM_VALIDATORS=true; meanwhile the app's /readyz responds 503, so that a load balancer sends it nothing yet.
 */
export async function warmUp(app: Express): Promise<void> {
  const entry = validators.get(app);
  if (!entry) return;
  entry.building = true;
  try {
    await warmValidators(entry.handlers);
  } finally {
    entry.building = false;
  }
}

/** An Express app serving only what the contract declares, its JSON sent as cached (json-once.ts). */
function jsonExpress(trustProxy: boolean): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('trust proxy', trustProxy);
  // The contract declares no ETag and no 304: Express would hash every body for one and respond to
  // If-None-Match with an undeclared 304, even `If-None-Match: *` without an ETag, so nothing is fresh.
  app.set('etag', false);
  Object.defineProperty(app.request, 'fresh', { get: () => false });
  // Cached reports and pages are sent as the JSON kept with them (platform/http/json-once.ts).
  app.response.json = jsonOnce;
  return app;
}

/** Builds the HTTP application: auth → body parser → OpenAPI validator → routers → 404 → errors. Never listens. */
export function createApp(deps: AppDeps): Express {
  const {
    db,
    logger,
    appToken,
    notifier,
    retryPolicy,
    apiKeys,
    reports,
    writes,
    publicBaseUrl,
    trustProxy = false,
    limits,
  } = deps;
  const app = jsonExpress(trustProxy);

  // First: every response (404s, errors, the docs) carries X-Request-Id, is logged and counted, and closes
  // its connection when written before its request's body arrived; a target in absolute form becomes a path.
  app.use(requestLogger(logger), httpMetrics, closeAfterUnreadBody, originFormTarget);
  // Headers for a JSON API: nothing may be framed, run or loaded from these responses (/docs sets its own CSP).
  app.use(
    securityHeaders({
      contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    }),
  );
  // The console responds with HTML and headers of its own, its errors included: before anything of the API's.
  const publishing = { notifier, policy: retryPolicy };
  const { validation, validator } = validationOf(app, deps);
  const wording = ERROR_WORDING.fields;
  app.use('/console', consoleRouter({ db, logger, appToken, wording, publishing, writes, validator }));
  app.use(refuseUnmetExpectations);

  // The published partner document and its reference page: public, and not operations of the contract.
  app.use(docsRouter({ publicBaseUrl }));
  app.use(noStore);
  app.use(
    ['/auth', '/reports', '/sandbox', '/events'],
    requireApiKey(apiKeys, { checkedAtCommit: writesCheckTheirKey }),
    partnerLimitsMiddleware(limits, partnerResponseKind),
  );
  app.use('/internal', requireAppToken(appToken));
  app.use(jsonBody());
  app.use(rejectUnstorableText);
  app.use(headAsGet(validation.handlers));

  app.use(authRouter());
  app.use(reportsRouter(db, reports, writes), sandboxRouter(db, publishing), eventsRouter(db));
  app.use(
    companiesRouter(db),
    applicationReportsRouter(db, writes),
    integrationsRouter(db, publishing),
    auditRouter(db, requireCompany(db)),
  );
  const starting = () => (validation.building ? 'starting: the validators are being built' : undefined);
  app.use(operationsRouter(db, appToken, starting));

  app.use(unknownRoute);
  app.use(errorHandler(logger, ERROR_WORDING));
  return app;
}
