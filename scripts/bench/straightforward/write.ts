// The straightforward implementation's POST /reports/new: one transaction that upserts the report by
// restId and replaces its inspectors and invoice items in their own tables.

import type { RequestHandler } from 'express';
import type pg from 'pg';
import type { CreateResult, ReportInput } from '../../../src/api-types.js';
import { parseInvoiceItem, toList } from '../../../src/reports/index.js';
import { HttpError, plainWrite } from './catalogue.js';

/** What a write sets: the report's plain columns, and its invoice items and inspectors' addresses when sent. */
interface Write {
  items?: { description: string; priceCents: number }[];
  emails?: string[];
  /** Every plain column's value (the whole row of a create), and the columns an update replaces. */
  values: Record<string, unknown>;
  replaced: string[];
}

type Inspector = { id: string | null; email: string };

function parseWrite(input: ReportInput): Write {
  const items =
    input.invoiceItems === undefined
      ? undefined
      : toList(input.invoiceItems).map((text) => {
          const item = parseInvoiceItem(text);
          if (!item) throw new HttpError(400, `invoice item "${text}" must look like "Radon test: $150.00"`);
          return item;
        });
  const emails = input.inspectorEmails === undefined ? undefined : toList(input.inspectorEmails);
  return { items, emails, ...plainWrite(input) };
}

async function findInspectors(client: pg.PoolClient, companyId: string, emails?: string[]): Promise<Inspector[]> {
  if (!emails || emails.length === 0) return [];
  // Each address once, at its first occurrence, as sent, folded by PostgreSQL's lower() as the
  // users' unique index folds: the service's rule (JavaScript's toLowerCase() differs, e.g. for İ).
  const { rows: inspectors } = await client.query<Inspector>(
    `SELECT id, email FROM (
       SELECT DISTINCT ON (lower(w.email)) u.id, w.email, w.n
         FROM unnest($2::text[]) WITH ORDINALITY AS w(email, n)
         LEFT JOIN users u ON u.company_id = $1 AND lower(u.email) = lower(w.email)
        ORDER BY lower(w.email), w.n
     ) wanted ORDER BY n`,
    [companyId, emails],
  );
  const unknown = inspectors.filter((i) => i.id === null).map((i) => i.email);
  if (unknown.length > 0) {
    throw new HttpError(400, `inspectorEmails are not users of this company: ${unknown.join(', ')}`);
  }
  return inspectors;
}

async function upsertReport(client: pg.PoolClient, companyId: string, restId: string | undefined, write: Write) {
  const { values, replaced } = write;
  const columns = ['company_id', 'rest_id', ...Object.keys(values)];
  const { rows } = await client.query<{ id: string; created: boolean }>(
    `INSERT INTO reports (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})
     ON CONFLICT (company_id, rest_id) DO UPDATE
        SET ${[...replaced.map((c) => `${c} = EXCLUDED.${c}`), 'updated_at = now()'].join(', ')}
      WHERE reports.status <> 'published'
     RETURNING id, (xmax = 0) AS created`,
    [companyId, restId ?? null, ...Object.values(values)],
  );
  const report = rows[0];
  if (!report) throw new HttpError(409, `report with restId ${restId} is published and can no longer be updated`);
  return report;
}

/** The report's inspectors and invoice items, each replaced when sent. */
async function replaceChildren(
  client: pg.PoolClient,
  report: { id: string; created: boolean },
  { emails, items }: Write,
  inspectors: Inspector[],
): Promise<void> {
  if (emails !== undefined) {
    if (!report.created) await client.query('DELETE FROM report_inspectors WHERE report_id = $1', [report.id]);
    await client.query(
      `INSERT INTO report_inspectors (report_id, position, user_id)
       SELECT $1, t.ord, t.id FROM unnest($2::uuid[]) WITH ORDINALITY AS t(id, ord)`,
      [report.id, inspectors.map((i) => i.id)],
    );
  }
  if (items !== undefined) {
    if (!report.created) await client.query('DELETE FROM report_invoice_items WHERE report_id = $1', [report.id]);
    await client.query(
      `INSERT INTO report_invoice_items (report_id, position, description, price_cents)
       SELECT $1, t.ord, t.description, t.price
         FROM unnest($2::text[], $3::bigint[]) WITH ORDINALITY AS t(description, price, ord)`,
      [report.id, items.map((i) => i.description), items.map((i) => i.priceCents)],
    );
  }
}

export function createOrUpdateReport(pool: pg.Pool): RequestHandler {
  return async (req, res) => {
    const input = req.body as ReportInput;
    const companyId = res.locals.companyId as string;
    const write = parseWrite(input);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const inspectors = await findInspectors(client, companyId, write.emails);
      const report = await upsertReport(client, companyId, input.restId, write);
      await replaceChildren(client, report, write, inspectors);
      await client.query('COMMIT');
      const result: CreateResult = { result: 'ok', id: report.id };
      res.json(result);
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    } finally {
      client.release();
    }
  };
}
