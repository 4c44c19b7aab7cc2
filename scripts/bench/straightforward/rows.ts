/**
 * The straightforward implementation's reads: a report row with its inspectors and invoice items
 * joined from their own tables, as the contract's Report; list cursors; the errors it answers 4xx.
 */
import type { Report } from '../../../src/api-types.js';
import { formatInvoiceItem, joinList } from '../../../src/reports/field-values.js';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface ReportRow {
  id: string;
  rest_id: string | null;
  from_rest_service: string;
  status: Report['status'];
  client_names: string[];
  client_emails: string[];
  client_phones: string[];
  inspection_date: string;
  address: string;
  year_built: string;
  square_feet: string;
  notes: string;
  agent_name: string;
  agent_email: string;
  agent_phone: string;
  published_url: string;
  created_at: Date;
  updated_at: Date;
  created_at_text: string;
  inspectors: { name: string; email: string }[];
  invoice_items: { description: string; priceCents: number }[];
}

export const SELECT_REPORT = `
  SELECT r.id, r.rest_id, r.from_rest_service, r.status, r.client_names, r.client_emails, r.client_phones,
         r.inspection_date::text AS inspection_date, r.address, r.year_built, r.square_feet, r.notes,
         r.agent_name, r.agent_email, r.agent_phone, r.published_url, r.created_at, r.updated_at,
         r.created_at::text AS created_at_text,
         coalesce((SELECT json_agg(json_build_object('name', u.name, 'email', u.email) ORDER BY ri.position)
                     FROM report_inspectors ri JOIN users u ON u.id = ri.user_id
                    WHERE ri.report_id = r.id), '[]') AS inspectors,
         coalesce((SELECT json_agg(json_build_object('description', i.description, 'priceCents', i.price_cents)
                                   ORDER BY i.position)
                     FROM report_invoice_items i
                    WHERE i.report_id = r.id), '[]') AS invoice_items
    FROM reports r`;

export function toReport(row: ReportRow): Report {
  return {
    id: row.id,
    address: row.address,
    clientName: joinList(row.client_names),
    clientEmail: joinList(row.client_emails),
    clientPhone: joinList(row.client_phones),
    agentName: row.agent_name,
    agentEmail: row.agent_email,
    agentPhone: row.agent_phone,
    inspectorName: joinList(row.inspectors.map((i) => i.name)),
    inspectorEmail: joinList(row.inspectors.map((i) => i.email)),
    inspectorNotes: row.notes,
    inspectionDate: `${row.inspection_date}T00:00:00.000Z`,
    fromRestService: row.from_rest_service,
    restId: row.rest_id ?? '',
    publishedUrl: row.published_url,
    status: row.status,
    yearBuilt: row.year_built,
    squareFeet: row.square_feet,
    invoiceItems: row.invoice_items.map(formatInvoiceItem),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

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
