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
  { limit, after }: { limit: number; after?: string },
): Promise<{ companies: Company[]; next?: string }> {
  const { rows } = await db.query<Company>(
    `SELECT id, name FROM companies
     WHERE sandbox_of IS NULL
       AND ($2::uuid IS NULL OR (created_at, id) < (SELECT created_at, id FROM companies WHERE id = $2))
     ORDER BY created_at DESC, id DESC
     LIMIT $1`,
    [limit + 1, after !== undefined && isUuid(after) ? after : null],
  );
  const companies = rows.slice(0, limit);
  return { companies, next: rows.length > limit ? companies.at(-1)!.id : undefined };
}

/** The company's users (inspectors) by name, at most `limit`. */
export async function listUsers(db: Queryable, companyId: string, limit: number): Promise<User[]> {
  const { rows } = await db.query<User>(
    'SELECT id, name, email FROM users WHERE company_id = $1 ORDER BY lower(name), id LIMIT $2',
    [companyId, limit],
  );
  return rows;
}
