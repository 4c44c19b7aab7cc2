import { addUser, countCompanies, createCompany, invite } from '../companies/index.js';
import { createPool, withTransaction } from '../db/pool.js';
import { createKey } from '../integrations/index.js';

/** What a newcomer needs to call the demo company at once: its API key and its inspector's e-mail. */
export interface DemoCredentials {
  demoApiKey: string;
  demoInspectorEmail: string;
}

/** The demo company's admin, invited on the first start: the link's token is shown that once, never kept. */
export const DEMO_ADMIN_EMAIL = 'alex@example.com';

/**
 * On an empty (migrated) database: a demo company with one inspector, an API key and an admin's
 * invitation (its one-time token). Undefined when the database has a company already (the demo made
 * on an earlier start, or data of the user's own).
 */
export async function seedDemo(
  databaseUrl: string,
): Promise<{ credentials: DemoCredentials; adminInvitation: string } | undefined> {
  const pool = createPool({ connectionString: databaseUrl, max: 1 });
  try {
    return await withTransaction(pool, async (db) => {
      await db.query('LOCK TABLE companies IN EXCLUSIVE MODE');
      if ((await countCompanies(db)) > 0) return undefined;
      const company = await createCompany(db, 'Demo Inspections');
      const inspector = await addUser(db, company.id, 'Dana Inspector', 'dana@example.com');
      const { key } = await createKey(db, company.id);
      // The demo's admin is invited by the operator.
      const by = { actor: { type: 'operator' } as const, clientAddress: '', companyId: company.id };
      const { token } = await invite(db, company.id, DEMO_ADMIN_EMAIL, 'admin', by);
      return { credentials: { demoApiKey: key, demoInspectorEmail: inspector!.email }, adminInvitation: token };
    });
  } finally {
    await pool.end();
  }
}
