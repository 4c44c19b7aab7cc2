import type { Queryable } from '../db/pool.js';
import type { Company, User } from '../api-types.js';

export async function createCompany(db: Queryable, name: string): Promise<Company> {
  const { rows } = await db.query<Company>('INSERT INTO companies (name) VALUES ($1) RETURNING id, name', [name]);
  return rows[0]!;
}

/** Adds a user (inspector); undefined when the company already has a user with this e-mail. */
export async function addUser(
  db: Queryable,
  companyId: string,
  name: string,
  email: string,
): Promise<User | undefined> {
  const { rows } = await db.query<User>(
    `INSERT INTO users (company_id, name, email) VALUES ($1, $2, $3)
     ON CONFLICT (company_id, lower(email)) DO NOTHING
     RETURNING id, name, email`,
    [companyId, name, email],
  );
  return rows[0];
}

export async function companyExists(db: Queryable, companyId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM companies WHERE id = $1', [companyId]);
  return rows.length > 0;
}

export async function countCompanies(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM companies');
  return Number(rows[0]!.n);
}
