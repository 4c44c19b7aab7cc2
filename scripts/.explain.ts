import os from 'node:os';
import path from 'node:path';
import { mkdtemp, chmod, rm } from 'node:fs/promises';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { runMigrations } from '../src/db/migrate.js';
import { createPool } from '../src/db/pool.js';
import { seedCompany } from './bench-seed.js';
import { createOrUpdate } from '../src/store/reports.js';

const dir = await mkdtemp(path.join(os.tmpdir(), 'intake-explain-'));
await chmod(dir, 0o755);
const db = await startEmbeddedPostgres(path.join(dir, 'pg'));
try {
  await runMigrations(db.url);
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  const co = await seedCompany(c, 'X', 20000);
  await c.query('VACUUM ANALYZE');
  const pool = createPool({ connectionString: db.url });
  const integ = (await c.query('SELECT id FROM integrations WHERE company_id = $1', [co.companyId])).rows[0].id;
  // Intercept: EXPLAIN every statement of a create.
  const orig = pg.Client.prototype.query;
  let capture = true;
  (pg.Client.prototype as any).query = function (this: pg.Client, q: any, v?: any) {
    const text = typeof q === 'string' ? q : q?.text;
    const values = typeof q === 'string' ? v : q?.values ?? v;
    if (capture && text && !/^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)/.test(text)) {
      return (async () => {
        await orig.call(this, 'SAVEPOINT ex');
        const r = await orig.call(this, { text: `EXPLAIN (ANALYZE, BUFFERS, SUMMARY) ${text}`, values } as any);
        console.log(r.rows.map((x: any) => x['QUERY PLAN']).filter((l: string) => /Planning Time|Execution Time|Trigger/.test(l)).join('\n'));
        await orig.call(this, 'ROLLBACK TO SAVEPOINT ex');
        return orig.call(this, q, v);
      })();
    }
    return orig.call(this, q, v);
  };
  const body = (i: number) => ({ restId: `x-${i}`, fromRestService: 'Bench CRM', clientNames: 'Jordan Smith', clientEmails: 'j@example.com', clientPhones: '555', address: '12 Elm', inspectionDate: '2026-03-14', yearBuilt: '1987', squareFeet: '2150', notes: 'n', agentName: 'A', agentEmail: 'a@example.com', agentPhone: '1', inspectorEmails: co.inspectorEmail, invoiceItems: ['Home inspection: $450', 'Radon: $150'] });
  for (let i = 0; i < 3; i++) { console.log('--- create', i); await createOrUpdate(pool, { companyId: co.companyId, integrationId: integ }, body(i) as any); }
  console.log('--- update'); await createOrUpdate(pool, { companyId: co.companyId, integrationId: integ }, body(0) as any);
  capture = false;
  await pool.end(); await c.end();
} finally {
  await db.stop(); await rm(dir, { recursive: true, force: true });
}
process.exit(0);
