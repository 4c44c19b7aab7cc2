import express, { type Express } from 'express';
import type { Pool } from './db/pool.js';
import { errorHandler, unknownRoute } from './http/errors.js';
import type { Logger } from './logger.js';
import { httpMetrics } from './http/metrics.js';
import { requireApiKey } from './auth/api-key.js';
import { requireAppToken } from './auth/app-token.js';
import { databaseKeys, type KeyAuthenticator } from './auth/api-key-cache.js';
import { refuseUnmetExpectations } from './http/expect.js';
import { jsonBody } from './http/json-body.js';
import { rejectNulCharacters } from './http/no-nul.js';
import { noStore } from './http/no-store.js';
import { headAsGet } from './http/head-as-get.js';
import { requestLogger } from './http/request-log.js';
import { securityHeaders } from './http/security-headers.js';
import { openApiValidator } from './http/openapi-validator.js';
import { applicationRouter } from './routes/application.js';
import { authRouter } from './routes/auth.js';
import { operationsRouter } from './routes/operations.js';
import { docsRouter } from './routes/docs.js';
import { reportsRouter } from './routes/reports.js';
import { jsonOnce } from './http/json-once.js';
import { ReportWriter } from './store/report-writes.js';
import { databaseReports, type ReportReads } from './store/report-cache.js';
import type { Notifier } from './webhook/notifier.js';
import { partnerLimits, type PartnerLimits } from './limits/partner-limits.js';

export interface AppDeps {
  db: Pool;
  logger: Logger;
  validateResponses: boolean;
  /** The application token guarding /internal (Authorization: Bearer). */
  appToken: string;
  /** Delivers the reportPublished webhook (tests inject one that trusts their local receiver). */
  notifier: Notifier;
  /** Where API keys are checked: an ApiKeyCache in servers; without one, the database on every request. */
  apiKeys?: KeyAuthenticator;
  /** Where the partner API reads reports: a ReportCache in servers; without one, the database on every read. */
  reports?: ReportReads;
  /** Where reports are created and updated: by default a ReportWriter on db (batches of writes). */
  writes?: ReportWriter;
  /** The base URL the published documents name (PUBLIC_BASE_URL); unset: the origin each was requested at. */
  publicBaseUrl?: string;
  /** Trust X-Forwarded-Proto/Host (and -For) from the peer: the service runs behind a proxy that sets them. */
  trustProxy?: boolean;
  /** Each key's request budget and each company's share of the process (partner API). */
  limits: PartnerLimits;
}

/** Builds the HTTP application: auth → body parser → OpenAPI validator → routers → 404 → errors. Never listens. */
export function createApp({
  db,
  logger,
  validateResponses,
  appToken,
  notifier,
  apiKeys,
  reports,
  writes = new ReportWriter(db),
  publicBaseUrl,
  trustProxy = false,
  limits,
}: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('trust proxy', trustProxy);
  // The contract declares no ETag and no 304: Express would hash every body for one and answer
  // If-None-Match with an undeclared 304, even `If-None-Match: *` without an ETag, so nothing is fresh.
  app.set('etag', false);
  Object.defineProperty(app.request, 'fresh', { get: () => false });
  // Cached reports and pages are sent as the JSON kept with them (http/json-once.ts).
  app.response.json = jsonOnce;

  // First, so that every response (404s, errors, the docs) carries X-Request-Id and is logged and counted.
  app.use(requestLogger(logger), httpMetrics);
  // Headers for a JSON API: nothing may be framed, run or loaded from these responses (/docs sets its own CSP).
  app.use(
    securityHeaders({
      contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    }),
  );
  app.use(refuseUnmetExpectations);

  // The published partner document and its reference page: public, and not operations of the contract.
  app.use(docsRouter({ publicBaseUrl }));
  app.use(noStore);
  app.use(['/auth', '/reports'], requireApiKey(apiKeys ?? databaseKeys(db)), partnerLimits(limits));
  app.use('/internal', requireAppToken(appToken));
  app.use(jsonBody());
  app.use(rejectNulCharacters);
  app.use(headAsGet(openApiValidator({ validateResponses })));

  app.use(authRouter());
  app.use(reportsRouter(reports ?? databaseReports(db), writes));
  app.use(applicationRouter(db, notifier, writes));
  app.use(operationsRouter(db, appToken));

  app.use(unknownRoute);
  app.use(errorHandler(logger));
  return app;
}
