import { COMPANY_FIELD_WORDING, companyNotFound } from './companies/index.js';
import type { ErrorWording } from './core/error-wording-types.js';
import { eventNotFound, INTEGRATION_FIELD_WORDING, keyNotFound } from './integrations/index.js';
import { REPORT_FIELD_WORDING, reportNotFound } from './reports/index.js';

/** Every component's words for its fields' schema failures and its ids' 404s, as the one error handler uses them. */
export const ERROR_WORDING: ErrorWording = {
  fields: { ...REPORT_FIELD_WORDING, ...INTEGRATION_FIELD_WORDING, ...COMPANY_FIELD_WORDING },
  notFound: { companyId: companyNotFound, reportId: reportNotFound, keyId: keyNotFound, eventId: eventNotFound },
};
