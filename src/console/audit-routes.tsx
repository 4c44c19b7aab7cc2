import type { AuditEvent } from '../api-types.js';
import { AUDIT_ACTIONS, listAudit, type AuditAction } from '../audit/index.js';
import type { PageRouter } from './access.js';
import { companyOf } from './company-param.js';
import type { PageDeps } from './deps.js';
import { Layout, TableScroll } from './layout.js';
import { render } from './render.js';
import { Time } from './time.js';

/** Entries a page shows: the API's default page. */
const ENTRIES_SHOWN = 50;

/** The filters and the page a request asks for; anything malformed is no filter (the first page). */
function queryOf(query: Record<string, unknown>) {
  const before = typeof query.before === 'string' && /^[1-9][0-9]{0,17}$/.test(query.before) ? query.before : undefined;
  const actor =
    typeof query.actor === 'string' && query.actor.length <= 320 && query.actor !== '' ? query.actor : undefined;
  const action =
    typeof query.action === 'string' && query.action in AUDIT_ACTIONS ? (query.action as AuditAction) : undefined;
  return { before, actor, action };
}

function EntryRow({ entry }: { entry: AuditEvent }) {
  const details = Object.entries(entry.details)
    .map(([name, value]) => `${name}: ${value}`)
    .join('; ');
  return (
    <tr>
      <td>
        <Time at={entry.at} />
      </td>
      <td>
        {entry.actor.name} <span class="muted">({entry.actor.type})</span>
      </td>
      <td>{AUDIT_ACTIONS[entry.action as AuditAction] ?? entry.action}</td>
      <td>{entry.subject}</td>
      <td>{details}</td>
      <td>{entry.clientAddress}</td>
    </tr>
  );
}

interface AuditProps {
  base: string;
  entries: AuditEvent[];
  more: boolean;
  actor?: string;
  action?: AuditAction;
  paged: boolean;
}

function AuditPage({ base, entries, more, actor, action, paged }: AuditProps) {
  const filters = new URLSearchParams({ ...(actor && { actor }), ...(action && { action }) });
  const older =
    more && entries.at(-1)
      ? `${base}?${new URLSearchParams({ ...Object.fromEntries(filters), before: entries.at(-1)!.id })}`
      : undefined;
  return (
    <Layout title="Audit trail">
      <p>Who did what in this company, newest first. Entries are never changed; they are kept for a year.</p>
      <form method="get" action={base} class="filters">
        <div class="field">
          <label for="audit-actor">Who (an e-mail address, operator, or a key's prefix)</label>
          <input id="audit-actor" name="actor" type="text" maxLength={320} value={actor ?? ''} />
        </div>
        <div class="field">
          <label for="audit-action">Action</label>
          <select id="audit-action" name="action">
            <option value="">Every action</option>
            {Object.entries(AUDIT_ACTIONS).map(([name, label]) => (
              <option key={name} value={name} selected={name === action}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <button type="submit">Filter</button>
      </form>
      {entries.length === 0 ? (
        <p>No entries{actor || action ? ' match these filters' : ''}.</p>
      ) : (
        <TableScroll label="Audit trail entries">
          <table>
            <caption>Audit trail entries</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Action</th>
                <th scope="col">On</th>
                <th scope="col">Details</th>
                <th scope="col">From</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((entry) => (
                <EntryRow key={entry.id} entry={entry} />
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <nav aria-label="Audit trail pages">
        {paged && <a href={filters.size > 0 ? `${base}?${filters}` : base}>Newest entries</a>}{' '}
        {older ? <a href={older}>Older entries</a> : entries.length > 0 && <span>No older entries.</span>}
      </nav>
    </Layout>
  );
}

/** The company's audit trail (GET …/audit), for the operator and the company's admins: newest first, filtered, paged. */
export function auditRoutes(router: PageRouter, { db }: PageDeps): void {
  router.get('/companies/:companyId/audit', async (req, res) => {
    const company = companyOf(res.locals);
    const { before, actor, action } = queryOf(req.query as Record<string, unknown>);
    const { entries, more } = await listAudit(db, company.id, { limit: ENTRIES_SHOWN, before, actor, action });
    const base = `/console/companies/${company.id}/audit`;
    render(res, 200, <AuditPage {...{ base, entries, more, actor, action, paged: before !== undefined }} />);
  });
}
