import type { Queryable } from '../db/pool.js';
import type { Company, User } from '../api-types.js';
import { isUuid } from '../core/ids.js';

/** The application's company of this id (never a sandbox: it is reached through its company only). */
export async function findCompany(db: Queryable, companyId: string): Promise<Company | undefined> {
  if (!isUuid(companyId)) return undefined;
  const { rows } = await db.query<Company>('SELECT id, name FROM companies WHERE id = $1 AND sandbox_of IS NULL', [
    companyId,
  ]);
  return rows[0];
}

/**
 * One page of the application's companies, newest first; `after` is the last id of the page before.
 * `next` is that id for this page when more follow (one row past the page tells).
 */
export async function listCompanies(
  db: Queryable,
  { limit, after, before }: { limit: number; after?: string; before?: string },
): Promise<{ companies: Company[]; older: boolean; newer: boolean }> {
  // Newest first; a page before a company is read oldest first from it, then turned around.
  const backwards = before !== undefined && after === undefined;
  const cursor = backwards ? before : after;
  const { rows } = await db.query<Company & { more: boolean }>(
    `SELECT id, name FROM companies
     WHERE sandbox_of IS NULL
       AND ($2::uuid IS NULL OR (created_at, id) ${backwards ? '>' : '<'} (SELECT created_at, id FROM companies WHERE id = $2))
     ORDER BY created_at ${backwards ? 'ASC' : 'DESC'}, id ${backwards ? 'ASC' : 'DESC'}
     LIMIT $1`,
    [limit + 1, cursor !== undefined && isUuid(cursor) ? cursor : null],
  );
  const page = rows.slice(0, limit);
  const more = rows.length > limit;
  const from = cursor !== undefined && isUuid(cursor);
  return backwards
    ? { companies: page.reverse(), older: from, newer: more }
    : { companies: page, older: more, newer: from };
}

/** The company's users (inspectors) by name, at most `limit`. */
export async function listUsers(db: Queryable, companyId: string, limit: number): Promise<User[]> {
  const { rows } = await db.query<User>(
    'SELECT id, name, email FROM users WHERE company_id = $1 ORDER BY lower(name), id LIMIT $2',
    [companyId, limit],
  );
  return rows;
}
