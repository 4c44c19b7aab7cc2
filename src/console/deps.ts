import type { FieldWording } from '../core/error-wording-types.js';
import type { Pool } from '../db/pool.js';
import type { Notifier, RetryPolicy } from '../integrations/index.js';
import type { ReportWriter } from '../reports/index.js';
import type { BodyValidator } from '../platform/http/body-validator.js';
import type { Logger } from '../platform/observability/logger.js';
import type { PageRouter } from './access.js';
import type { FormChecker } from './schema-check.js';

export interface ConsoleDeps {
  db: Pool;
  logger: Logger;
  /** The application token, which signs the operator in. */
  appToken: string;
  /** The words of the API's 400s for each field (the composition's ERROR_WORDING.fields). */
  wording: FieldWording;
  /** What the integrations' actions that deliver webhooks need, as the application API passes it. */
  publishing: { notifier: Notifier; policy: RetryPolicy };
  /** Where reports are written, as the application API writes them. */
  writes: ReportWriter;
  /** The API's own validator, which checks a form's input as the body of the operation that takes it. */
  validator: BodyValidator;
}

/** What each page module gets: the console's dependencies and the form checker (schema-check.ts). */
export interface PageDeps extends ConsoleDeps {
  forms: FormChecker;
}

/** A module of signed-in pages: registers its routes on the console's router (see pages.ts). */
export type PageRoutes = (router: PageRouter, deps: PageDeps) => void;
