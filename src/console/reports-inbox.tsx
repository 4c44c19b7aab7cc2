import type { Company, Report, User } from '../api-types.js';
import { listUsers } from '../companies/index.js';
import { refuse } from '../core/errors.js';
import { DEFAULT_PAGE_LIMIT } from '../core/page-limit.js';
import { cameThroughApi, cursorParam, encodeCursor, listForCompany, type ListCursor } from '../reports/index.js';
import { companyOf } from './company-param.js';
import { mayUse, type PageRouter } from './access.js';
import type { PageDeps } from './deps.js';
import { Layout, TableScroll } from './layout.js';
import { render, usePrincipal } from './render.js';

/** The inspectors the inbox's filter offers: the API's largest page. */
const INSPECTORS_LISTED = 100;

/** How much of a partner's value a row of the inbox shows: the whole value is on the report's page. */
const SHOWN_CHARS = 80;

/** A value cut to SHOWN_CHARS characters (whole code points), marked when cut. */
export function bounded(text: string): string {
  if (text.length <= SHOWN_CHARS) return text;
  return `${[...text.slice(0, SHOWN_CHARS + 1)].slice(0, SHOWN_CHARS).join('')}…`;
}

/** openapi.yaml's rule (listApplicationReports): a report from the partner API, still new. */
export const isNewFromRestApi = (report: Report) => report.status === 'new' && cameThroughApi(report);

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

/** The inbox's filters and position, as its query carries them (a GET form, links to the pages either side). */
interface InboxQuery {
  status?: Report['status'];
  inspector?: string;
  after?: string;
  before?: string;
}

/** The inbox's address with these filters and this position (none: the first page). */
function inboxUrl(company: Company, { status, inspector, after, before }: InboxQuery): string {
  const query = new URLSearchParams();
  if (status) query.set('status', status);
  if (inspector) query.set('inspector', inspector);
  if (after) query.set('after', after);
  if (before) query.set('before', before);
  const text = query.toString();
  return text ? `${reportsOf(company)}?${text}` : reportsOf(company);
}

interface InboxProps {
  company: Company;
  inspectors: User[];
  filters: InboxQuery;
  reports: Report[];
  next?: string;
  previous?: string;
}

/** Filter by status and by inspector: a GET form, so that the filtered inbox has an address of its own. */
function Filters({ company, inspectors, filters }: Pick<InboxProps, 'company' | 'inspectors' | 'filters'>) {
  return (
    <form method="get" action={reportsOf(company)} class="filters">
      <div class="field">
        <label for="filter-status">Status</label>
        <select id="filter-status" name="status">
          <option value="">Any status</option>
          {Object.entries(STATUS_LABELS).map(([value, label]) => (
            <option key={value} value={value} selected={filters.status === value}>
              {label}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="filter-inspector">Inspector</label>
        <select id="filter-inspector" name="inspector">
          <option value="">Any inspector</option>
          {inspectors.map((user) => (
            <option key={user.id} value={user.email} selected={filters.inspector === user.email}>
              {bounded(user.name)} ({bounded(user.email)})
            </option>
          ))}
        </select>
      </div>
      <button type="submit">Filter</button>{' '}
      {(filters.status || filters.inspector) && <a href={reportsOf(company)}>Show every report</a>}
    </form>
  );
}

/** The links to the pages either side, and a line saying that more reports exist when they do. */
export function Paging({ newer, older, what }: { newer?: string; older?: string; what: string }) {
  if (!newer && !older) return null;
  return (
    <nav aria-label={`Pages of ${what}`} class="paging">
      <p>{older ? `More ${what} follow on older pages.` : `These are the oldest ${what}.`}</p>
      {newer && <a href={newer}>Newer {what}</a>}
      {older && <a href={older}>Older {what}</a>}
    </nav>
  );
}

/** The way back: Companies > the company > Reports. */
/** The way back: each step a link for a role that may use it (an inspector's company is its name only). */
function InboxBreadcrumb({ company }: { company: Company }) {
  const principal = usePrincipal()!;
  return (
    <nav aria-label="Breadcrumb">
      <ol class="breadcrumb">
        {mayUse(principal, 'companies') && (
          <li>
            <a href="/console/companies">Companies</a>
          </li>
        )}
        <li>
          {mayUse(principal, 'company') ? (
            <a href={`/console/companies/${company.id}`}>{bounded(company.name)}</a>
          ) : (
            bounded(company.name)
          )}
        </li>
        <li aria-current="page">Reports</li>
      </ol>
    </nav>
  );
}

function InboxPage({ company, inspectors, filters, reports, next, previous }: InboxProps) {
  const base = reportsOf(company);
  const caption = 'Newest inspection first';
  const filtersOnly = { status: filters.status, inspector: filters.inspector };
  return (
    <Layout title="Reports">
      <InboxBreadcrumb company={company} />
      <Filters company={company} inspectors={inspectors} filters={filters} />
      {reports.length === 0 ? (
        <p>{filtersOnly.status || filtersOnly.inspector ? 'No reports match these filters.' : 'No reports yet.'}</p>
      ) : (
        <TableScroll label={caption}>
          <table class="reports">
            <caption>{caption}</caption>
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
        </TableScroll>
      )}
      <Paging
        what="reports"
        newer={previous && inboxUrl(company, { ...filtersOnly, before: previous })}
        older={next && inboxUrl(company, { ...filtersOnly, after: next })}
      />
    </Layout>
  );
}

/** A query's value as one text, or undefined when absent or empty; a repeated one is refused. */
function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value !== undefined && typeof value !== 'string') throw refuse.badRequest(`${name} must be given once`);
  return value === '' ? undefined : value;
}

/** The position a cursor names (after or before, not both), or the 400 page. */
function positionOf(after?: string, before?: string): { after?: ListCursor; before?: ListCursor } {
  if (after !== undefined && before !== undefined) throw refuse.badRequest('give after or before, not both');
  return { after: cursorParam('after', after), before: cursorParam('before', before) };
}

/**
 * GET …/reports: the company's reports, newest inspection first, a page (the API's default limit) at a
 * time either way, filtered by status and by inspector. A filter or cursor that is none is the 400 page.
 */
export function reportsInboxRoutes(router: PageRouter, { db }: PageDeps): void {
  router.get('/companies/:companyId/reports', async (req, res) => {
    const company = companyOf(res.locals);
    const query = req.query as Record<string, unknown>;
    const status = single(query, 'status');
    if (status !== undefined && !Object.hasOwn(STATUS_LABELS, status))
      throw refuse.badRequest(`status must be one of ${Object.keys(STATUS_LABELS).join(', ')}`);
    const inspector = single(query, 'inspector');
    const filters = { status: status as Report['status'] | undefined, inspector };
    const position = positionOf(single(query, 'after'), single(query, 'before'));
    const [page, inspectors] = await Promise.all([
      listForCompany(db, company.id, {
        limit: DEFAULT_PAGE_LIMIT,
        ...position,
        status: filters.status,
        inspectorEmail: inspector,
      }),
      listUsers(db, company.id, INSPECTORS_LISTED),
    ]);
    const props = {
      company,
      inspectors,
      filters,
      reports: page.reports,
      next: page.next && encodeCursor(page.next),
      previous: page.previous && encodeCursor(page.previous),
    };
    render(res, 200, <InboxPage {...props} />);
  });
}
