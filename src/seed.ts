import type { Pool } from './db/pool.js';
import { withTransaction } from './db/pool.js';
import { createKey } from './store/api-keys.js';
import { addUser, countCompanies, createCompany } from './store/companies.js';

export interface DemoAccount {
  inspectorEmail: string;
  apiKey: string;
}

/** On an empty database, creates a demo company with one inspector and an API key; otherwise nothing. */
export async function seedDemo(pool: Pool): Promise<DemoAccount | undefined> {
  return withTransaction(pool, async (db) => {
    await db.query('LOCK TABLE companies IN EXCLUSIVE MODE');
    if ((await countCompanies(db)) > 0) return undefined;
    const company = await createCompany(db, 'Demo Inspections');
    const inspector = await addUser(db, company.id, 'Dana Inspector', 'dana@example.com');
    const { key } = await createKey(db, company.id);
    return { inspectorEmail: inspector!.email, apiKey: key };
  });
}
