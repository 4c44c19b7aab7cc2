import { addUser, countCompanies, createCompany } from '../companies/index.js';
import { createPool, withTransaction } from '../db/pool.js';
import { createKey } from '../integrations/index.js';

/** What a newcomer needs to call the demo company at once: its API key and its inspector's e-mail. */
export interface DemoCredentials {
  demoApiKey: string;
  demoInspectorEmail: string;
}

/**
 * On an empty (migrated) database: a demo company with one inspector and an API key. Undefined when
 * the database has a company already (the demo made on an earlier start, or data of the user's own).
 */
export async function seedDemo(databaseUrl: string): Promise<DemoCredentials | undefined> {
  const pool = createPool({ connectionString: databaseUrl, max: 1 });
  try {
    return await withTransaction(pool, async (db) => {
      await db.query('LOCK TABLE companies IN EXCLUSIVE MODE');
      if ((await countCompanies(db)) > 0) return undefined;
      const company = await createCompany(db, 'Demo Inspections');
      const inspector = await addUser(db, company.id, 'Dana Inspector', 'dana@example.com');
      const { key } = await createKey(db, company.id);
      return { demoApiKey: key, demoInspectorEmail: inspector!.email };
    });
  } finally {
    await pool.end();
  }
}
