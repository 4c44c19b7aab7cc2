/**
 * The straightforward implementation's reads: a report row with its inspectors and invoice items
 * joined from their own tables, as the contract's Report; list cursors; the errors it answers 4xx.
 */
import type { ReportRow as CatalogueRow } from '../../../src/reports/index.js';
import { PLAIN_SELECT, toReport } from './catalogue.js';

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

export { toReport };

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
