import type { Report } from '../api-types.js';
import type { Queryable } from '../db/pool.js';
import { ALL_FIELDS, type ReportRow } from './fields.js';
import { reportOf } from './output.js';
import type { ListCursor } from './cursor.js';
import { isUuid } from '../core/ids.js';

/**
 * A report is one row: its inspectors and invoice items are kept on it as displayed (migration 4),
 * so a read is one index probe and a page one index range scan. The reads are named (prepared once
 * per connection): planning costs PostgreSQL more than running them, and the generic plans are the
 * same index scans. The columns read and the output made of them come from the field catalogue
 * (fields.ts); cursor_created_at is the list order's own (microseconds, where createdAt shows milliseconds).
 */
const REPORT_COLUMNS = [
  'r.id',
  'r.status',
  ...ALL_FIELDS.flatMap(([, field]) =>
    Object.keys({ ...field.columns, ...field.read }).map((c) =>
      field.read?.[c] ? `${field.read[c]} AS ${c}` : `r.${c}`,
    ),
  ),
  `to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_created_at`,
].join(', ');

function toReport(row: ReportRow): Report {
  return reportOf(ALL_FIELDS.map(([, field]) => field.output(row)));
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
  /** With `after` or `before`: where the page before it ends, if there is one (reports newer than its first). */
  previous?: ListCursor;
}

export interface ListOptions {
  limit: number;
  after?: ListCursor;
  /** The page that ends just before this position (paging back, in the console); not with `after`. */
  before?: ListCursor;
  restId?: string;
  /** Only the reports with this status (the application's inbox). */
  status?: Report['status'];
  /** Only the reports this user (by stored e-mail) inspects (the console's inbox). */
  inspectorEmail?: string;
}

type PageRow = ReportRow & { id: string; inspection_date: string; cursor_created_at: string };
const cursorOf = (row: PageRow): ListCursor => ({
  date: row.inspection_date,
  createdAt: row.cursor_created_at,
  id: row.id,
});

/**
 * What a list page may weigh, about, in JSON: it ends before the report that would take it past
 * this (but always holds one report), so 100 reports at their largest make many pages, not one of
 * tens of megabytes that the service would hold several times over while building it.
 */
export const PAGE_BUDGET_BYTES = 1024 * 1024;

/**
 * One page of the company's reports in list order (at most `limit`, within PAGE_BUDGET_BYTES), and
 * the cursor of the next page if there is one.
 */
export async function listForCompany(
  db: Queryable,
  companyId: string,
  { limit, after, before, restId, status, inspectorEmail }: ListOptions,
): Promise<ReportPage> {
  const params: unknown[] = [companyId, limit, PAGE_BUDGET_BYTES];
  const where = ['r.company_id = $1'];
  // Paging back reads the list the other way from the position, and turns the page round.
  const from = after ?? before;
  const order = before ? 'ASC' : 'DESC';
  if (from) {
    params.push(from.date, from.createdAt, from.id);
    where.push(`(r.inspection_date, r.created_at, r.id) ${before ? '>' : '<'} ($4::date, $5::timestamptz, $6::uuid)`);
  }
  if (restId !== undefined) {
    params.push(restId);
    where.push(`r.rest_id = $${params.length}`);
  }
  if (status !== undefined) {
    params.push(status);
    where.push(`r.status = $${params.length}`);
  }
  if (inspectorEmail !== undefined) {
    params.push(inspectorEmail);
    where.push(`r.inspector_emails @> ARRAY[$${params.length}::text]`);
  }
  // The page comes back as one JSON array: node-postgres parses that with JSON.parse, far cheaper than
  // its per-column parsing of 21 wide rows with arrays.
  // The scan reads one report past the limit (is there a next page?) and sums each report's
  // display_bytes (display-bytes.ts) as it goes; the array holds only the reports within the limit and
  // the budget, so the reports past the budget are never built into JSON, nor read from TOAST.
  const result = await db.query<{ page: PageRow[]; scanned: number }>({
    // One prepared statement per shape of the query (its text depends only on which filters are given).
    name: `reports-page${after ? '-after' : ''}${before ? '-before' : ''}${restId !== undefined ? '-rest-id' : ''}${status !== undefined ? '-status' : ''}${inspectorEmail !== undefined ? '-inspector' : ''}`,
    text: `SELECT coalesce(json_agg(p ORDER BY p.n) FILTER (WHERE p.n <= $2 AND (p.n = 1 OR p.page_bytes <= $3)), '[]') AS page,
                  count(*)::integer AS scanned
             FROM (SELECT ${REPORT_COLUMNS}, row_number() OVER w AS n, sum(r.display_bytes) OVER w AS page_bytes
                     FROM reports r WHERE ${where.join(' AND ')}
                   WINDOW w AS (ORDER BY r.inspection_date ${order}, r.created_at ${order}, r.id ${order} ROWS UNBOUNDED PRECEDING)
                    ORDER BY r.inspection_date ${order}, r.created_at ${order}, r.id ${order} LIMIT $2 + 1) AS p`,
    values: params,
  });
  const { page, scanned } = result.rows[0]!;
  const last = page.at(-1);
  const more = scanned > page.length && last ? cursorOf(last) : undefined;
  if (!before) {
    const first = page[0];
    return { reports: page.map(toReport), next: more, previous: after && first ? cursorOf(first) : undefined };
  }
  // Back from `before`: the page in list order; the next page starts at its last report (`before` itself follows).
  page.reverse();
  return { reports: page.map(toReport), next: page.length > 0 ? cursorOf(page.at(-1)!) : before, previous: more };
}
