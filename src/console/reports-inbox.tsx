import type { Company, Report } from '../api-types.js';
import { badRequest } from '../core/errors.js';
import { DEFAULT_PAGE_LIMIT } from '../core/page-limit.js';
import { decodeCursor, encodeCursor, listForCompany } from '../reports/index.js';
import { companyOf } from './company-param.js';
import { mayUse, type PageRouter } from './access.js';
import type { PageDeps } from './deps.js';
import { Layout } from './layout.js';
import { render, usePrincipal } from './render.js';

/** How much of a partner's value a row of the inbox shows: the whole value is on the report's page. */
const SHOWN_CHARS = 80;

/** A value cut to SHOWN_CHARS characters (whole code points), marked when cut. */
export function bounded(text: string): string {
  if (text.length <= SHOWN_CHARS) return text;
  return `${[...text.slice(0, SHOWN_CHARS + 1)].slice(0, SHOWN_CHARS).join('')}…`;
}

/** openapi.yaml's rule (listApplicationReports): a report from the partner API, still new. */
export const isNewFromRestApi = (report: Report) => report.status === 'new' && report.fromRestService.trim() !== '';

export const STATUS_LABELS: Record<Report['status'], string> = {
  new: 'New',
  in_progress: 'In progress',
  published: 'Published',
};

export const day = (report: Report) => report.inspectionDate.slice(0, 10);
export const reportsOf = (company: Company) => `/console/companies/${company.id}/reports`;

export function Badge({ report }: { report: Report }) {
  return isNewFromRestApi(report) ? <span class="badge">New from REST API</span> : null;
}

function InboxPage({ company, reports, next }: { company: Company; reports: Report[]; next?: string }) {
  const base = reportsOf(company);
  return (
    <Layout title="Reports">
      <p>
        {mayUse(usePrincipal()!, 'company') ? (
          <a href={`/console/companies/${company.id}`}>{bounded(company.name)}</a>
        ) : (
          bounded(company.name)
        )}
      </p>
      {reports.length === 0 ? (
        <p>No reports yet.</p>
      ) : (
        <table class="reports">
          <caption>Newest inspection first</caption>
          <thead>
            <tr>
              <th scope="col">Address</th>
              <th scope="col">Client</th>
              <th scope="col">Inspection date</th>
              <th scope="col">Status</th>
              <th scope="col">Source</th>
              <th scope="col">REST id</th>
            </tr>
          </thead>
          <tbody>
            {reports.map((report) => (
              <tr key={report.id}>
                <td>
                  <a href={`${base}/${report.id}`}>{bounded(report.address) || 'No address'}</a>
                </td>
                <td>{bounded(report.clientName)}</td>
                <td>{day(report)}</td>
                <td>
                  {STATUS_LABELS[report.status]} <Badge report={report} />
                </td>
                <td>{bounded(report.fromRestService)}</td>
                <td>{bounded(report.restId)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next && (
        <p>
          <a href={`${base}?after=${next}`}>Older reports</a>
        </p>
      )}
    </Layout>
  );
}

/** GET …/reports: the company's reports, newest inspection first, a page (the API's default limit) at a time. */
export function reportsInbox(router: PageRouter, { db }: PageDeps): void {
  router.get('/companies/:companyId/reports', async (req, res) => {
    const company = companyOf(res.locals);
    const cursor = req.query.after;
    const after = typeof cursor === 'string' ? decodeCursor(cursor) : undefined;
    if (cursor !== undefined && !after) throw badRequest('after is not a valid cursor');
    const page = await listForCompany(db, company.id, { limit: DEFAULT_PAGE_LIMIT, after });
    const next = page.next && encodeCursor(page.next);
    render(res, 200, <InboxPage company={company} reports={page.reports} next={next} />);
  });
}
