// The straightforward implementation's report fields, derived from src/reports/fields.ts (inspectors
// and invoice items in child tables), and its reads: a report with its children joined, list cursors, 4xx errors.

import type { Report, ReportInput } from '../../../src/api-types.js';
import { ALL_FIELDS, INPUT_FIELDS, type Origin, type ReportRow as CatalogueRow } from '../../../src/reports/index.js';

/** The fields kept in child tables (report_inspectors, report_invoice_items), not as columns. */
const CHILD_FIELDS = new Set(['inspectorEmails', 'invoiceItems']);
/** A partner's write, as the service sees one (the integration matters to fromRestService only). */
const PARTNER: Origin = { companyId: '', integrationId: 'straightforward' };

export const PLAIN_COLUMNS = ALL_FIELDS.filter(([name]) => !CHILD_FIELDS.has(name)).flatMap(([, field]) =>
  Object.entries(field.columns),
);

/** Each plain column's definition in CREATE TABLE: the restId may be null; a date has no empty value. */
export function columnDefinition([column, type]: [string, string]): string {
  if (column === 'rest_id') return `${column} ${type}`;
  if (type === 'date') return `${column} ${type} NOT NULL`;
  return `${column} ${type} NOT NULL DEFAULT '${type.endsWith('[]') ? '{}' : ''}'`;
}

/** The SELECT list of a report's plain columns (as the service reads them), from reports `r`. */
export const PLAIN_SELECT = ALL_FIELDS.filter(([name]) => !CHILD_FIELDS.has(name))
  .flatMap(([, field]) =>
    Object.keys({ ...field.columns, ...field.read }).map((c) =>
      field.read?.[c] ? `${field.read[c]} AS ${c}` : `r.${c}`,
    ),
  )
  .join(', ');

/** A write's plain columns: every value on a create, and on an update those its fields replace. */
export function plainWrite(input: ReportInput): { values: Record<string, unknown>; replaced: string[] } {
  const values: Record<string, unknown> = {};
  const replaced: string[] = [];
  for (const [name, field] of INPUT_FIELDS) {
    if (CHILD_FIELDS.has(name) || name === 'restId') continue;
    const params = field.write.params(input[name], PARTNER);
    Object.assign(values, params);
    if (field.write.replaces !== 'never' && field.write.replaces(input[name], PARTNER))
      replaced.push(...Object.keys(params));
  }
  return { values, replaced };
}

/** The Report of a row read with PLAIN_SELECT and the child tables' values under the catalogue's column names. */
export function toReport(row: CatalogueRow): Report {
  return Object.assign({}, ...ALL_FIELDS.map(([, field]) => field.output(row))) as Report;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A report as read: the catalogue's columns (the child tables' as arrays of the same names), and the cursor's text. */
export type ReportRow = CatalogueRow & { id: string; inspection_date: string; created_at_text: string };

export const SELECT_REPORT = `
  SELECT r.id, r.status, ${PLAIN_SELECT},
         r.created_at::text AS created_at_text,
         ARRAY(SELECT u.name FROM report_inspectors ri JOIN users u ON u.id = ri.user_id
                WHERE ri.report_id = r.id ORDER BY ri.position) AS inspector_names,
         ARRAY(SELECT u.email FROM report_inspectors ri JOIN users u ON u.id = ri.user_id
                WHERE ri.report_id = r.id ORDER BY ri.position) AS inspector_emails,
         ARRAY(SELECT i.description FROM report_invoice_items i WHERE i.report_id = r.id ORDER BY i.position)
           AS invoice_descriptions,
         ARRAY(SELECT i.price_cents FROM report_invoice_items i WHERE i.report_id = r.id ORDER BY i.position)
           AS invoice_prices
    FROM reports r`;

export function encodeCursor(row: ReportRow): string {
  return Buffer.from(JSON.stringify([row.inspection_date, row.created_at_text, row.id])).toString('base64url');
}

export function decodeCursor(text: string): [string, string, string] {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 3 && value.every((v) => typeof v === 'string')) {
      return value as [string, string, string];
    }
  } catch {
    // falls through to the 400
  }
  throw new HttpError(400, 'after is not a valid cursor');
}
