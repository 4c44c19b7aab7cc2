import type { Queryable } from '../db/pool.js';
import type { Company, User } from '../api-types.js';
import { refuse } from '../core/errors.js';
import { quoted } from '../core/quoted.js';

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

/** Adds an inspector as the application's API and console do: a second user with the e-mail is a 409. */
export async function addInspector(db: Queryable, companyId: string, name: string, email: string): Promise<User> {
  const user = await addUser(db, companyId, name, email);
  if (!user) throw refuse.conflict(`the company already has a user with e-mail ${quoted(email)}`);
  return user;
}

export async function companyExists(db: Queryable, companyId: string): Promise<boolean> {
  // A sandbox is no company of the application's: it is reached through its company only.
  const { rows } = await db.query('SELECT 1 FROM companies WHERE id = $1 AND sandbox_of IS NULL', [companyId]);
  return rows.length > 0;
}

export async function countCompanies(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM companies WHERE sandbox_of IS NULL');
  return Number(rows[0]!.n);
}

/**
 * The company's sandbox (migration 15): a company of its own, made on first use. Its name says whose it
 * is; it has no users of its own (its reports' inspectors are the company's users).
 */
export async function sandboxOf(db: Queryable, companyId: string): Promise<string> {
  // Made by another call at the same moment, it is not in this statement's snapshot: the next one finds it.
  for (let attempt = 0; attempt < 2; attempt++) {
    const id = await makeSandbox(db, companyId);
    if (id) return id;
  }
  throw new Error(`company ${companyId} has no sandbox and cannot have one`);
}

async function makeSandbox(db: Queryable, companyId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(
    `WITH made AS (
       INSERT INTO companies (name, sandbox_of)
       SELECT name || ' (sandbox)', id FROM companies WHERE id = $1 AND sandbox_of IS NULL
       ON CONFLICT (sandbox_of) DO NOTHING
       RETURNING id
     )
     SELECT id FROM made UNION ALL SELECT id FROM companies WHERE sandbox_of = $1`,
    [companyId],
  );
  return rows[0]?.id;
}

/** The company's sandbox if it has one. */
export async function existingSandbox(db: Queryable, companyId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM companies WHERE sandbox_of = $1', [companyId]);
  return rows[0]?.id;
}
