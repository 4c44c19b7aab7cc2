import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Express } from 'express';
import pg from 'pg';
import { migrate } from 'postgres-migrations';
import { createApp } from '../../src/app.js';
import { MIGRATIONS_DIR, runMigrations } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { createKey } from '../../src/integrations/keys/api-keys.js';
import type { User } from '../../src/api-types.js';
import { addUser, createCompany } from '../../src/companies/companies.js';
import { api, appDeps, databaseUrl, newApp, newCompany, pool, reportInput, unique } from '../support/harness.js';

/** A company of a schema of its own (see atMigration), with two inspectors and an API key. */
interface EarlierCompany {
  id: string;
  key: string;
  dana: User;
  lee: User;
}

/**
 * A schema of its own, migrated up to migration `upTo`, with a company in it: `write` stores reports
 * the way the service stored them then, through `db`, and may read them through `app` (the service of
 * today on that schema). Then the remaining migrations run, and `check` reads them back.
 */
async function atMigration(
  upTo: number,
  write: (db: pg.Client, company: EarlierCompany, app: Express) => Promise<void>,
  check: (db: pg.Client, company: EarlierCompany, app: Express) => Promise<void>,
): Promise<void> {
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
    for (const name of await readdir(MIGRATIONS_DIR)) {
      if (Number.parseInt(name, 10) <= upTo) await cp(path.join(MIGRATIONS_DIR, name), path.join(earlier, name));
    }
    await db.connect();
    await migrate({ client: db }, earlier, { logger: () => undefined });
    const { id } = await createCompany(db, `Before ${upTo + 1}`);
    const dana = (await addUser(db, id, 'Dana Inspector', 'dana@example.com'))!;
    const lee = (await addUser(db, id, 'Lee Inspector', 'lee@example.com'))!;
    const company = { id, key: (await createKey(db, id)).key, dana, lee };
    const app = createApp(appDeps(appPool));
    await write(db, company, app);
    await runMigrations(url.toString());
    await check(db, company, app);
  } finally {
    await appPool.end();
    await db.end().catch(() => undefined);
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
    await rm(earlier, { recursive: true, force: true });
  }
}

/** The report as GET /reports/{reportId} answers it. */
const readReport = async (key: string, id: string) =>
  (await api().get(`/reports/${id}`).set('X-API-KEY', key).expect(200)).body;

describe("a report's inspectors and invoice items, kept once on the report row", () => {
  it('are kept through creates, merge updates, swaps, clearing and refused updates', async () => {
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
    const kept = await readReport(company.key, body.id);
    expect(kept).to.include({ inspectorName: 'Lee Inspector, Dana Inspector' });
    expect(kept).to.include({ inspectorEmail: 'lee@example.com, Dana@Example.com' });
    expect(kept.invoiceItems).to.deep.equal(['Home inspection: $450.00', 'Radon test: $150.50']);

    // Swapped inspectors and prices.
    await send({
      restId,
      inspectorEmails: ['dana@example.com', 'lee@example.com'],
      invoiceItems: ['Radon test: $150.5', 'Home inspection: $450'],
    }).expect(200);
    const swapped = await readReport(company.key, body.id);
    expect(swapped).to.include({ inspectorName: 'Dana Inspector, Lee Inspector', inspectorNotes: 'only notes' });
    expect(swapped.invoiceItems).to.deep.equal(['Radon test: $150.50', 'Home inspection: $450.00']);

    await send({ restId, inspectorEmails: 'DANA@example.com', invoiceItems: [] }).expect(200);
    await send({ restId, inspectorEmails: 'nobody@example.com', invoiceItems: ['Pool: $90'] }).expect(400);
    const changed = await readReport(company.key, body.id);
    expect(changed).to.include({ inspectorName: 'Dana Inspector', inspectorEmail: 'Dana@Example.com' });
    expect(changed.invoiceItems).to.deep.equal([]);

    await send({ restId, inspectorEmails: '', invoiceItems: 'Pool: $90' }).expect(200);
    const list = (await api().get(`/reports?restId=${restId}`).set('X-API-KEY', company.key).expect(200)).body;
    expect(list[0]).to.include({ inspectorName: '', inspectorEmail: '' });
    expect(list[0].invoiceItems).to.deep.equal(['Pool: $90.00']);
  });

  it('show exactly one of several concurrent updates of one restId, from several processes', async function () {
    this.timeout(120_000);
    const company = await newCompany([
      { name: 'Ann Inspector', email: 'ann@example.com' },
      { name: 'Bo Inspector', email: 'bo@example.com' },
      { name: 'Cy Inspector', email: 'cy@example.com' },
    ]);
    // Three updates that differ in every list (4, 0 and 1 invoice items; 3, 0 and 1 inspectors) and
    // in their notes; the report must read as one of them whole, whichever came last.
    const updates = [
      {
        notes: 'four',
        invoiceItems: ['Home inspection: $450', 'Radon test: $150', 'Sewer scope: $1,250', 'Pool: $90'],
        inspectorEmails: ['ann@example.com', 'bo@example.com', 'cy@example.com'],
      },
      { notes: 'none', invoiceItems: [], inspectorEmails: [] },
      { notes: 'one', invoiceItems: 'Mold test: $75', inspectorEmails: 'bo@example.com' },
    ];
    const shown = [
      {
        inspectorNotes: 'four',
        inspectorName: 'Ann Inspector, Bo Inspector, Cy Inspector',
        inspectorEmail: 'ann@example.com, bo@example.com, cy@example.com',
        invoiceItems: ['Home inspection: $450.00', 'Radon test: $150.00', 'Sewer scope: $1,250.00', 'Pool: $90.00'],
      },
      { inspectorNotes: 'none', inspectorName: '', inspectorEmail: '', invoiceItems: [] },
      {
        inspectorNotes: 'one',
        inspectorName: 'Bo Inspector',
        inspectorEmail: 'bo@example.com',
        invoiceItems: ['Mold test: $75.00'],
      },
    ];
    // One app with its own pool per update: three server processes writing at once.
    const servers = updates.map(() => newApp());
    try {
      for (let round = 0; round < 20; round++) {
        const restId = unique('concurrent');
        const { body } = await api(servers[0]!.app)
          .post('/reports/new')
          .set('X-API-KEY', company.key)
          .send(reportInput({ restId, ...updates[0] }))
          .expect(200);
        const answers = await Promise.all(
          updates.map((update, i) =>
            api(servers[i]!.app)
              .post('/reports/new')
              .set('X-API-KEY', company.key)
              .send(reportInput({ restId, ...update })),
          ),
        );
        expect(
          answers.map((a) => [a.status, a.body]),
          `round ${round}`,
        ).to.deep.equal(updates.map(() => [200, { result: 'ok', id: body.id }]));
        const report = await readReport(company.key, body.id);
        const { inspectorNotes, inspectorName, inspectorEmail, invoiceItems } = report;
        expect(shown, `round ${round}`).to.deep.include({
          inspectorNotes,
          inspectorName,
          inspectorEmail,
          invoiceItems,
        });
      }
    } finally {
      await Promise.all(servers.map((server) => server.pool.end()));
    }
  });

  it('record each inspector as assigned: a user changed or removed later leaves earlier reports as written', async () => {
    const company = await newCompany([{ name: 'Dana Inspector', email: 'dana@example.com' }]);
    const send = (body: Record<string, unknown>) =>
      api().post('/reports/new').set('X-API-KEY', company.key).send(reportInput(body));
    const restId = unique('assigned');
    const { body } = await send({ restId, inspectorEmails: 'dana@example.com' }).expect(200);
    const before = await readReport(company.key, body.id);

    // The application API has neither; the inspection application's own database work could do both.
    await pool().query(`UPDATE users SET name = 'Dana Renamed', email = 'dana.r@example.com' WHERE company_id = $1`, [
      company.companyId,
    ]);
    const renamed = await readReport(company.key, body.id);
    expect(renamed).to.deep.equal(before);
    expect(renamed).to.include({ inspectorName: 'Dana Inspector', inspectorEmail: 'dana@example.com' });

    await pool().query('DELETE FROM users WHERE company_id = $1', [company.companyId]);
    const removed = await readReport(company.key, body.id);
    expect(removed).to.deep.equal(before);
    // A write still needs a user of the company for every address, and then changes nothing.
    const refused = await send({ restId, notes: 'changed', inspectorEmails: 'dana@example.com' }).expect(400);
    expect(refused.body).to.deep.equal({ error: 'inspectorEmails are not users of this company: dana@example.com' });
    const after = await readReport(company.key, body.id);
    expect(after).to.deep.equal(before);
  });

  it('are carried over from the child rows of reports written before migration 4', async function () {
    this.timeout(60_000);
    let reportId = '';
    await atMigration(
      3,
      async (db, company) => {
        const { rows } = await db.query<{ id: string }>(
          `INSERT INTO reports (company_id, client_names, inspection_date)
           VALUES ($1, '{Jordan Smith}', '2026-03-14') RETURNING id`,
          [company.id],
        );
        reportId = rows[0]!.id;
        await db.query(
          `INSERT INTO report_inspectors (company_id, report_id, position, user_id)
           VALUES ($1, $2, 1, $3), ($1, $2, 2, $4)`,
          [company.id, reportId, company.lee.id, company.dana.id],
        );
        await db.query(
          `INSERT INTO report_invoice_items (company_id, report_id, position, description, price_cents)
           VALUES ($1, $2, 1, 'Home inspection', 45000), ($1, $2, 2, 'Radon test', 15050)`,
          [company.id, reportId],
        );
      },
      async (_db, company, app) => {
        const res = await api(app).get(`/reports/${reportId}`).set('X-API-KEY', company.key).expect(200);
        expect(res.body).to.include({
          inspectorName: 'Lee Inspector, Dana Inspector',
          inspectorEmail: 'lee@example.com, dana@example.com',
        });
        expect(res.body.invoiceItems).to.deep.equal(['Home inspection: $450.00', 'Radon test: $150.50']);
      },
    );
  });

  it('read after migration 7 as they read before it, also where the child rows had drifted', async function () {
    this.timeout(60_000);
    const written: { id: string; body: unknown }[] = [];
    await atMigration(
      6,
      async (db, company, app) => {
        const send = (body: Record<string, unknown>) =>
          api(app).post('/reports/new').set('X-API-KEY', company.key).send(reportInput(body)).expect(200);
        const ids = [
          (await send({ inspectorEmails: ['lee@example.com', 'dana@example.com'], invoiceItems: 'Pool: $90' })).body.id,
          (await send({ inspectorEmails: 'dana@example.com', invoiceItems: ['Radon test: $150'] })).body.id,
          (await send({})).body.id,
        ];
        // The store before migration 7 wrote child rows too: the first report's match its row, the second's are
        // what concurrent updates left behind (more rows than the report shows).
        await db.query(
          `INSERT INTO report_inspectors (company_id, report_id, position, user_id)
           VALUES ($1, $2, 1, $4), ($1, $2, 2, $5), ($1, $3, 1, $5), ($1, $3, 2, $4)`,
          [company.id, ids[0], ids[1], company.lee.id, company.dana.id],
        );
        await db.query(
          `INSERT INTO report_invoice_items (company_id, report_id, position, description, price_cents)
           VALUES ($1, $2, 1, 'Pool', 9000), ($1, $3, 1, 'Radon test', 15000), ($1, $3, 2, 'Sewer scope', 125000)`,
          [company.id, ids[0], ids[1]],
        );
        for (const id of ids) {
          const res = await api(app).get(`/reports/${id}`).set('X-API-KEY', company.key).expect(200);
          written.push({ id, body: res.body });
        }
      },
      async (db, company, app) => {
        for (const { id, body } of written) {
          const res = await api(app).get(`/reports/${id}`).set('X-API-KEY', company.key).expect(200);
          expect(res.body).to.deep.equal(body);
        }
        const { rows } = await db.query(
          `SELECT to_regclass('report_inspectors') AS inspectors, to_regclass('report_invoice_items') AS items`,
        );
        expect(rows).to.deep.equal([{ inspectors: null, items: null }]);
      },
    );
  });
});
