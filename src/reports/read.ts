import type { Report } from '../api-types.js';
import type { Queryable } from '../db/pool.js';
import { formatInvoiceItem, joinList } from './field-values.js';
import type { ListCursor } from './cursor.js';
import { isUuid } from '../core/ids.js';
import { isoTimestamp } from '../db/iso-timestamp.js';

interface ReportRow {
  id: string;
  address: string;
  client_names: string[];
  client_emails: string[];
  client_phones: string[];
  agent_name: string;
  agent_email: string;
  agent_phone: string;
  inspector_names: string[];
  inspector_emails: string[];
  notes: string;
  inspection_date: string;
  from_rest_service: string;
  rest_id: string | null;
  published_url: string;
  status: Report['status'];
  year_built: string;
  square_feet: string;
  invoice_descriptions: string[];
  /** Text from a row, numbers from the JSON of a list page: both go through Number(). */
  invoice_prices: (string | number)[];
  created_at: string;
  updated_at: string;
  cursor_created_at: string;
}

/**
 * A report is one row: its inspectors and invoice items are kept on it as displayed (migration 4),
 * so a read is one index probe and a page one index range scan. The reads are named (prepared once
 * per connection): planning costs PostgreSQL more than running them, and the generic plans are the
 * same index scans.
 */
const REPORT_COLUMNS = `
         r.id, r.address, r.client_names, r.client_emails, r.client_phones,
         r.agent_name, r.agent_email, r.agent_phone, r.notes,
         to_char(r.inspection_date, 'YYYY-MM-DD') AS inspection_date,
         r.from_rest_service, r.rest_id, r.published_url, r.status, r.year_built, r.square_feet,
         ${isoTimestamp('r.created_at')} AS created_at,
         ${isoTimestamp('r.updated_at')} AS updated_at,
         to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_created_at,
         r.inspector_names, r.inspector_emails, r.invoice_descriptions, r.invoice_prices`;

function toReport(row: ReportRow): Report {
  return {
    id: row.id,
    address: row.address,
    clientName: joinList(row.client_names),
    clientEmail: joinList(row.client_emails),
    clientPhone: joinList(row.client_phones),
    agentName: row.agent_name,
    agentEmail: row.agent_email,
    agentPhone: row.agent_phone,
    inspectorName: joinList(row.inspector_names),
    inspectorEmail: joinList(row.inspector_emails),
    inspectorNotes: row.notes,
    inspectionDate: `${row.inspection_date}T00:00:00.000Z`,
    fromRestService: row.from_rest_service,
    restId: row.rest_id ?? '',
    publishedUrl: row.published_url,
    status: row.status,
    yearBuilt: row.year_built,
    squareFeet: row.square_feet,
    invoiceItems: row.invoice_descriptions.map((description, i) =>
      formatInvoiceItem({ description, priceCents: Number(row.invoice_prices[i]) }),
    ),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The company's report, or undefined: unknown, malformed and other companies' ids look the same. */
export async function findForCompany(db: Queryable, companyId: string, id: string): Promise<Report | undefined> {
  if (!isUuid(id)) return undefined;
  const { rows } = await db.query<ReportRow>({
    name: 'report-by-id',
    text: `SELECT ${REPORT_COLUMNS} FROM reports r WHERE r.company_id = $1 AND r.id = $2`,
    values: [companyId, id],
  });
  return rows[0] && toReport(rows[0]);
}

/** One page of a list: its reports, and where the next page starts if there is one. */
export interface ReportPage {
  reports: Report[];
  next?: ListCursor;
}

export interface ListOptions {
  limit: number;
  after?: ListCursor;
  restId?: string;
}

/**
 * What a list page may weigh, about, in JSON: it ends before the report that would take it past
 * this (but always holds one report), so 100 reports at their largest make many pages, not one of
 * 30 MB that the service would hold several times over while building it.
 */
export const PAGE_BUDGET_BYTES = 1024 * 1024;

/**
 * One page of the company's reports in list order (at most `limit`, within PAGE_BUDGET_BYTES), and
 * the cursor of the next page if there is one.
 */
export async function listForCompany(
  db: Queryable,
  companyId: string,
  { limit, after, restId }: ListOptions,
): Promise<ReportPage> {
  const params: unknown[] = [companyId, limit, PAGE_BUDGET_BYTES];
  const where = ['r.company_id = $1'];
  if (after) {
    params.push(after.date, after.createdAt, after.id);
    where.push('(r.inspection_date, r.created_at, r.id) < ($4::date, $5::timestamptz, $6::uuid)');
  }
  if (restId !== undefined) {
    params.push(restId);
    where.push(`r.rest_id = $${params.length}`);
  }
  // The page comes back as one JSON array: node-postgres parses that with JSON.parse, far cheaper than
  // its per-column parsing of 21 wide rows with arrays (measured: about 40% less client CPU per page).
  // The scan reads one report past the limit (is there a next page?) and sums each report's
  // display_bytes (migration 9) as it goes; the array holds only the reports within the limit and
  // the budget, so the reports past the budget are never built into JSON, nor read from TOAST.
  const result = await db.query<{ page: ReportRow[]; scanned: number }>({
    // One prepared statement per shape of the query (its text depends only on which filters are given).
    name: `reports-page${after ? '-after' : ''}${restId !== undefined ? '-rest-id' : ''}`,
    text: `SELECT coalesce(json_agg(p ORDER BY p.n) FILTER (WHERE p.n <= $2 AND (p.n = 1 OR p.page_bytes <= $3)), '[]') AS page,
                  count(*)::integer AS scanned
             FROM (SELECT ${REPORT_COLUMNS}, row_number() OVER w AS n, sum(r.display_bytes) OVER w AS page_bytes
                     FROM reports r WHERE ${where.join(' AND ')}
                   WINDOW w AS (ORDER BY r.inspection_date DESC, r.created_at DESC, r.id DESC ROWS UNBOUNDED PRECEDING)
                    ORDER BY r.inspection_date DESC, r.created_at DESC, r.id DESC LIMIT $2 + 1) AS p`,
    values: params,
  });
  const { page, scanned } = result.rows[0]!;
  const last = page[page.length - 1];
  const next =
    scanned > page.length && last
      ? { date: last.inspection_date, createdAt: last.cursor_created_at, id: last.id }
      : undefined;
  return { reports: page.map(toReport), next };
}
