import type { FieldWording } from '../core/error-wording-types.js';
import { quoted } from '../core/quoted.js';
import { INVOICE_ITEM_SHAPE } from './field-values.js';

const CALENDAR_DATE = 'must be a calendar date YYYY-MM-DD';
const E_MAIL = 'must be an e-mail address';
const A_NAME = 'must contain at least one non-blank name';
const IDEMPOTENCY_KEY = 'must be 1 to 255 visible ASCII characters other than " and \\, bare or in double quotes';

/** The report fields' schema failures in words (after the field's name). */
export const REPORT_FIELD_WORDING: FieldWording = {
  inspectionDate: { format: CALENDAR_DATE, type: CALENDAR_DATE, pattern: CALENDAR_DATE },
  clientNames: { pattern: A_NAME, contains: A_NAME },
  clientEmails: { pattern: E_MAIL },
  agentEmail: { pattern: E_MAIL },
  invoiceItems: { pattern: INVOICE_ITEM_SHAPE },
  // The application list's filter (a query parameter).
  status: { enum: 'must be one of new, in_progress, published' },
  // The header, as the validator names it.
  'idempotency-key': {
    pattern: IDEMPOTENCY_KEY,
    maxLength: IDEMPOTENCY_KEY,
    minLength: IDEMPOTENCY_KEY,
  },
};

/** The 404 of a report id in a path, the same whether it is unknown, another company's or malformed. */
export const reportNotFound = (id: string) => `report ${quoted(id)} not found`;

/** The 409 of a report whose publish is delivering its webhook now (status.ts publishInFlight): it passes. */
export const beingPublished = (report: string) =>
  `${report} is being published (its webhook delivery is in flight): try again later`;

/** The 400 of inspector e-mails that name no user: a list has more room than one id, still far under `error`'s. */
export const notUsersOfCompany = (emails: string[]) =>
  `inspectorEmails are not users of this company: ${quoted(emails.join(', '), 1000)}`;
