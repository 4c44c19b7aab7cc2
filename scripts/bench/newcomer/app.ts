// The benchmark's second yardstick: POST /reports/new as a newcomer writes it in an afternoon with the
// same packages (express, express-openapi-validator on requests, pg) and nothing else: no request log,
// no response validation, one transaction per create with one statement per inspector and invoice item.
// The first yardstick (../straightforward/) also logs and validates responses, which a newcomer may not
// do; the service must be 2.5 times either. It writes into the straightforward implementation's tables.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type ErrorRequestHandler, type Express } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import pg from 'pg';
import type { ReportInput } from '../../../src/api-types.js';
import { parseInvoiceItem, toList } from '../../../src/reports/index.js';
import { HttpError, plainWrite } from '../straightforward/catalogue.js';
import { SCHEMA } from '../straightforward/schema.js';

const SPEC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../openapi.yaml');

async function createReport(client: pg.PoolClient, companyId: string, input: ReportInput): Promise<string> {
  const { values } = plainWrite(input);
  const columns = ['company_id', 'rest_id', ...Object.keys(values)];
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO reports (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})
     RETURNING id`,
    [companyId, input.restId ?? null, ...Object.values(values)],
  );
  const id = rows[0]!.id;
  for (const [i, email] of toList(input.inspectorEmails ?? []).entries()) {
    const { rowCount } = await client.query(
      `INSERT INTO report_inspectors (report_id, position, user_id)
       SELECT $1, $2, id FROM users WHERE company_id = $3 AND lower(email) = lower($4)`,
      [id, i + 1, companyId, email],
    );
    if (rowCount === 0) throw new HttpError(400, `inspectorEmails: ${email} is not a user of this company`);
  }
  for (const [i, text] of toList(input.invoiceItems ?? []).entries()) {
    const item = parseInvoiceItem(text);
    if (!item) throw new HttpError(400, `invoice item "${text}" must look like "Radon test: $150.00"`);
    await client.query(
      'INSERT INTO report_invoice_items (report_id, position, description, price_cents) VALUES ($1, $2, $3, $4)',
      [id, i + 1, item.description, item.priceCents],
    );
  }
  return id;
}

const errorHandler: ErrorRequestHandler = (
  err: { status?: number; code?: string; message: string },
  _req,
  res,
  _next,
) => {
  const status = err.status ?? (err.code === '23505' || err.code?.startsWith('22') ? 400 : 500);
  res.status(status).json({ error: status >= 500 ? 'internal server error' : err.message });
};

export function createNewcomerApp(pool: pg.Pool): Express {
  const app = express();
  // The contract's Cache-Control on every response, as any implementation of it must send.
  app.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  app.use(express.json({ limit: '1mb' }));
  app.use(OpenApiValidator.middleware({ apiSpec: SPEC, validateRequests: true }));
  app.use(async (req, res, next) => {
    const hash = createHash('sha256')
      .update(req.get('x-api-key') ?? '')
      .digest();
    const { rows } = await pool.query('SELECT company_id FROM api_keys WHERE key_hash = $1', [hash]);
    if (!rows[0]) throw new HttpError(400, 'invalid API key');
    res.locals.companyId = rows[0].company_id;
    next();
  });
  app.get('/auth', (_req, res) => {
    res.json({ result: 'ok' });
  });
  app.post('/reports/new', async (req, res) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const id = await createReport(client, res.locals.companyId as string, req.body as ReportInput);
      await client.query('COMMIT');
      res.json({ result: 'ok', id });
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    } finally {
      client.release();
    }
  });
  app.use(errorHandler);
  return app;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, options: `-c search_path=${SCHEMA}` });
  const server = createNewcomerApp(pool).listen(Number(process.env.PORT ?? 0), '127.0.0.1');
  process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
}
