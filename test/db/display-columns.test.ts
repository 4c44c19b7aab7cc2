import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { migrate } from 'postgres-migrations';
import { createApp } from '../../src/app.js';
import { MIGRATIONS_DIR, runMigrations } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { createKey } from '../../src/store/api-keys.js';
import { addUser, createCompany } from '../../src/store/companies.js';
import { api, appDeps, databaseUrl, newCompany, pool, reportInput, unique } from '../support/harness.js';

/**
 * Reports keep their inspectors and invoice items twice: as child rows (the record) and as the
 * displayed copies on the report row that reads use (migration 4). These tests hold the two together.
 */
describe('displayed inspectors and invoice items on the report row', () => {
  /** Reports of a company whose copies differ from what their child rows say. */
  const drifted = async (db: pg.Pool | pg.Client, companyId: string) =>
    (
      await db.query(
        `SELECT r.id FROM reports r
          WHERE r.company_id = $1 AND (r.inspector_names, r.inspector_emails, r.invoice_descriptions, r.invoice_prices)
            IS DISTINCT FROM (
              coalesce((SELECT array_agg(u.name ORDER BY ri.position) FROM report_inspectors ri
                          JOIN users u ON u.company_id = ri.company_id AND u.id = ri.user_id
                         WHERE ri.company_id = r.company_id AND ri.report_id = r.id), '{}'),
              coalesce((SELECT array_agg(u.email ORDER BY ri.position) FROM report_inspectors ri
                          JOIN users u ON u.company_id = ri.company_id AND u.id = ri.user_id
                         WHERE ri.company_id = r.company_id AND ri.report_id = r.id), '{}'),
              coalesce((SELECT array_agg(description ORDER BY position) FROM report_invoice_items
                         WHERE company_id = r.company_id AND report_id = r.id), '{}'),
              coalesce((SELECT array_agg(price_cents ORDER BY position) FROM report_invoice_items
                         WHERE company_id = r.company_id AND report_id = r.id), '{}'))`,
        [companyId],
      )
    ).rows;

  it('match the child rows after creates, merge updates, clearing and refused updates', async () => {
    const company = await newCompany([
      { name: 'Dana Inspector', email: 'Dana@Example.com' },
      { name: 'Lee Inspector', email: 'lee@example.com' },
    ]);
    const send = (body: Record<string, unknown>) =>
      api().post('/reports/new').set('X-API-KEY', company.key).send(reportInput(body));
    const restId = unique('copies');
    const { body } = await send({
      restId,
      inspectorEmails: ['lee@example.com', 'dana@example.com'],
      invoiceItems: ['Home inspection: $450', 'Radon test: $150.5'],
    }).expect(200);
    await send({}).expect(200); // no restId: a second report, without inspectors or items
    await send({ restId, notes: 'only notes' }).expect(200);
    expect(await drifted(pool(), company.companyId)).to.deep.equal([]);
    const kept = (await api().get(`/reports/${body.id}`).set('X-API-KEY', company.key).expect(200)).body;
    expect(kept).to.include({ inspectorName: 'Lee Inspector, Dana Inspector' });
    expect(kept).to.include({ inspectorEmail: 'lee@example.com, Dana@Example.com' });
    expect(kept.invoiceItems).to.deep.equal(['Home inspection: $450.00', 'Radon test: $150.50']);

    // Swapped inspectors and prices: each user and position moves within one statement.
    await send({
      restId,
      inspectorEmails: ['dana@example.com', 'lee@example.com'],
      invoiceItems: ['Radon test: $150.5', 'Home inspection: $450'],
    }).expect(200);
    expect(await drifted(pool(), company.companyId)).to.deep.equal([]);
    const swapped = (await api().get(`/reports/${body.id}`).set('X-API-KEY', company.key).expect(200)).body;
    expect(swapped).to.include({ inspectorName: 'Dana Inspector, Lee Inspector', inspectorNotes: 'only notes' });
    expect(swapped.invoiceItems).to.deep.equal(['Radon test: $150.50', 'Home inspection: $450.00']);

    await send({ restId, inspectorEmails: 'DANA@example.com', invoiceItems: [] }).expect(200);
    await send({ restId, inspectorEmails: 'nobody@example.com', invoiceItems: ['Pool: $90'] }).expect(400);
    expect(await drifted(pool(), company.companyId)).to.deep.equal([]);
    const changed = (await api().get(`/reports/${body.id}`).set('X-API-KEY', company.key).expect(200)).body;
    expect(changed).to.include({ inspectorName: 'Dana Inspector', inspectorEmail: 'Dana@Example.com' });
    expect(changed.invoiceItems).to.deep.equal([]);

    await send({ restId, inspectorEmails: '', invoiceItems: 'Pool: $90' }).expect(200);
    expect(await drifted(pool(), company.companyId)).to.deep.equal([]);
    const list = (await api().get(`/reports?restId=${restId}`).set('X-API-KEY', company.key).expect(200)).body;
    expect(list[0]).to.include({ inspectorName: '', inspectorEmail: '' });
    expect(list[0].invoiceItems).to.deep.equal(['Pool: $90.00']);
  });

  it('are filled from the child rows of reports written before migration 4', async function () {
    this.timeout(60_000);
    const schema = `migration_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: databaseUrl() });
    await admin.connect();
    const earlier = await mkdtemp(path.join(os.tmpdir(), 'intake-migrations-'));
    const url = new URL(databaseUrl());
    url.searchParams.set('options', `-c search_path=${schema}`);
    const db = new pg.Client({ connectionString: url.toString() });
    const appPool = createPool({ connectionString: url.toString() });
    try {
      await admin.query(`CREATE SCHEMA ${schema}`);
      // postgres-migrations looks for its table in any schema: give this one its own, empty.
      await admin.query(`CREATE TABLE ${schema}.migrations (LIKE public.migrations INCLUDING ALL)`);
      // The schema as migrations 1–3 left it, with a report written the way the service wrote it then.
      for (const name of await readdir(MIGRATIONS_DIR)) {
        if (Number.parseInt(name, 10) <= 3) await cp(path.join(MIGRATIONS_DIR, name), path.join(earlier, name));
      }
      await db.connect();
      await migrate({ client: db }, earlier, { logger: () => undefined });
      const company = await createCompany(db, 'Before 4');
      const dana = (await addUser(db, company.id, 'Dana Inspector', 'dana@example.com'))!;
      const lee = (await addUser(db, company.id, 'Lee Inspector', 'lee@example.com'))!;
      const { key } = await createKey(db, company.id);
      const {
        rows: [report],
      } = await db.query<{ id: string }>(
        `INSERT INTO reports (company_id, client_names, inspection_date) VALUES ($1, '{Jordan Smith}', '2026-03-14')
         RETURNING id`,
        [company.id],
      );
      await db.query(
        `INSERT INTO report_inspectors (company_id, report_id, position, user_id) VALUES ($1, $2, 1, $3), ($1, $2, 2, $4)`,
        [company.id, report!.id, lee.id, dana.id],
      );
      await db.query(
        `INSERT INTO report_invoice_items (company_id, report_id, position, description, price_cents)
         VALUES ($1, $2, 1, 'Home inspection', 45000), ($1, $2, 2, 'Radon test', 15050)`,
        [company.id, report!.id],
      );

      await runMigrations(url.toString());
      const res = await api(createApp(appDeps(appPool)))
        .get(`/reports/${report!.id}`)
        .set('X-API-KEY', key)
        .expect(200);
      expect(res.body).to.include({
        inspectorName: 'Lee Inspector, Dana Inspector',
        inspectorEmail: 'lee@example.com, dana@example.com',
      });
      expect(res.body.invoiceItems).to.deep.equal(['Home inspection: $450.00', 'Radon test: $150.50']);
      expect(await drifted(db, company.id)).to.deep.equal([]);
    } finally {
      await appPool.end();
      await db.end().catch(() => undefined);
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
      await rm(earlier, { recursive: true, force: true });
    }
  });
});
