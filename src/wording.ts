import { COMPANY_FIELD_WORDING, companyNotFound } from './companies/index.js';
import type { Wording } from './core/wording.js';
import { INTEGRATION_FIELD_WORDING, keyNotFound } from './integrations/index.js';
import { REPORT_FIELD_WORDING, reportNotFound } from './reports/index.js';

/** Every component's words for its fields and ids, as the one error handler uses them. */
export const WORDING: Wording = {
  fields: { ...REPORT_FIELD_WORDING, ...INTEGRATION_FIELD_WORDING, ...COMPANY_FIELD_WORDING },
  notFound: { companyId: companyNotFound, reportId: reportNotFound, keyId: keyNotFound },
};
