/**
 * The benchmark's straightforward implementation of the partner API: what a competent engineer writes
 * in a day with the same packages (express, express-openapi-validator checking requests and responses
 * against the same openapi.yaml, pg, pino-http) and no tuning: one key query per request, normalized
 * tables joined on read, a transaction per write. `npm run bench` measures the service against it.
 * Only the benchmark (and its test) uses it; src/ never imports anything from here.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import type pg from 'pg';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import type { CreateResult, ListReportsQuery, Report, ReportInput } from '../../../src/api-types.js';
import { noStore } from '../../../src/http/no-store.js';
import { formatInvoiceItem, joinList, parseInvoiceItem, toList } from '../../../src/report-fields.js';

const SPEC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../openapi.yaml');

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface ReportRow {
  id: string;
  rest_id: string | null;
  from_rest_service: string;
  status: Report['status'];
  client_names: string[];
  client_emails: string[];
  client_phones: string[];
  inspection_date: string;
  address: string;
  year_built: string;
  square_feet: string;
  notes: string;
  agent_name: string;
  agent_email: string;
  agent_phone: string;
  published_url: string;
  created_at: Date;
  updated_at: Date;
  created_at_text: string;
  inspectors: { name: string; email: string }[];
  invoice_items: { description: string; priceCents: number }[];
}

const SELECT_REPORT = `
  SELECT r.id, r.rest_id, r.from_rest_service, r.status, r.client_names, r.client_emails, r.client_phones,
         r.inspection_date::text AS inspection_date, r.address, r.year_built, r.square_feet, r.notes,
         r.agent_name, r.agent_email, r.agent_phone, r.published_url, r.created_at, r.updated_at,
         r.created_at::text AS created_at_text,
         coalesce((SELECT json_agg(json_build_object('name', u.name, 'email', u.email) ORDER BY ri.position)
                     FROM report_inspectors ri JOIN users u ON u.id = ri.user_id
                    WHERE ri.report_id = r.id), '[]') AS inspectors,
         coalesce((SELECT json_agg(json_build_object('description', i.description, 'priceCents', i.price_cents)
                                   ORDER BY i.position)
                     FROM report_invoice_items i
                    WHERE i.report_id = r.id), '[]') AS invoice_items
    FROM reports r`;

function toReport(row: ReportRow): Report {
  return {
    id: row.id,
    address: row.address,
    clientName: joinList(row.client_names),
    clientEmail: joinList(row.client_emails),
    clientPhone: joinList(row.client_phones),
    agentName: row.agent_name,
    agentEmail: row.agent_email,
    agentPhone: row.agent_phone,
    inspectorName: joinList(row.inspectors.map((i) => i.name)),
    inspectorEmail: joinList(row.inspectors.map((i) => i.email)),
    inspectorNotes: row.notes,
    inspectionDate: `${row.inspection_date}T00:00:00.000Z`,
    fromRestService: row.from_rest_service,
    restId: row.rest_id ?? '',
    publishedUrl: row.published_url,
    status: row.status,
    yearBuilt: row.year_built,
    squareFeet: row.square_feet,
    invoiceItems: row.invoice_items.map(formatInvoiceItem),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The optional fields of ReportInput: [field, column, whether the column is a list]. */
const OPTIONAL_FIELDS: [keyof ReportInput, string, boolean][] = [
  ['clientEmails', 'client_emails', true],
  ['clientPhones', 'client_phones', true],
  ['address', 'address', false],
  ['yearBuilt', 'year_built', false],
  ['squareFeet', 'square_feet', false],
  ['notes', 'notes', false],
  ['agentName', 'agent_name', false],
  ['agentEmail', 'agent_email', false],
  ['agentPhone', 'agent_phone', false],
];

function encodeCursor(row: ReportRow): string {
  return Buffer.from(JSON.stringify([row.inspection_date, row.created_at_text, row.id])).toString('base64url');
}

function decodeCursor(text: string): [string, string, string] {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 3 && value.every((v) => typeof v === 'string')) {
      return value as [string, string, string];
    }
  } catch {
    // falls through to the 400
  }
  throw new HttpError(400, 'after is not a valid cursor');
}

export function createStraightforwardApp({ pool, logger }: { pool: pg.Pool; logger: Logger }): Express {
  const app = express();
  app.use(pinoHttp({ logger }));
  // The document requires it on every answer of its operations.
  app.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  // The contract's Cache-Control on every answer, as any implementation of it must send.
  app.use(noStore);
  app.use(express.json({ limit: '1mb' }));

  const requireKey: RequestHandler = async (req, res, next) => {
    const key = req.get('x-api-key');
    if (!key) throw new HttpError(400, 'missing X-API-KEY header');
    const hash = createHash('sha256').update(key).digest();
    const { rows } = await pool.query<{ company_id: string }>('SELECT company_id FROM api_keys WHERE key_hash = $1', [
      hash,
    ]);
    if (!rows[0]) throw new HttpError(400, 'invalid API key');
    res.locals.companyId = rows[0].company_id;
    next();
  };
  app.use(['/auth', '/reports'], requireKey);
  app.use(OpenApiValidator.middleware({ apiSpec: SPEC, validateRequests: true, validateResponses: true }));

  app.get('/auth', (_req, res) => {
    res.json({ result: 'ok' });
  });

  app.get('/reports/:reportId', async (req, res) => {
    const { reportId } = req.params;
    const { rows } = UUID.test(reportId)
      ? await pool.query<ReportRow>(`${SELECT_REPORT} WHERE r.company_id = $1 AND r.id = $2`, [
          res.locals.companyId,
          reportId,
        ])
      : { rows: [] };
    if (!rows[0]) throw new HttpError(404, `report ${reportId} not found`);
    res.json(toReport(rows[0]));
  });

  app.get('/reports', async (req, res) => {
    const query = req.query as ListReportsQuery;
    const limit = query.limit ?? 20;
    const params: unknown[] = [res.locals.companyId];
    const where = ['r.company_id = $1'];
    if (query.after !== undefined) {
      params.push(...decodeCursor(query.after));
      where.push('(r.inspection_date, r.created_at, r.id) < ($2, $3, $4)');
    }
    if (query.restId !== undefined) {
      params.push(query.restId);
      where.push(`r.rest_id = $${params.length}`);
    }
    params.push(limit + 1);
    const { rows } = await pool.query<ReportRow>(
      `${SELECT_REPORT} WHERE ${where.join(' AND ')}
        ORDER BY r.inspection_date DESC, r.created_at DESC, r.id DESC LIMIT $${params.length}`,
      params,
    );
    const page = rows.slice(0, limit);
    if (rows.length > limit) {
      const next = new URLSearchParams({ limit: String(limit), after: encodeCursor(page[page.length - 1]!) });
      if (query.restId !== undefined) next.set('restId', query.restId);
      res.set('Link', `</reports?${next}>; rel="next"`);
    }
    res.json(page.map(toReport));
  });

  app.post('/reports/new', async (req, res) => {
    const input = req.body as ReportInput;
    const companyId = res.locals.companyId as string;
    const items =
      input.invoiceItems === undefined
        ? undefined
        : toList(input.invoiceItems).map((text) => {
            const item = parseInvoiceItem(text);
            if (!item) throw new HttpError(400, `invoice item "${text}" must look like "Radon test: $150.00"`);
            return item;
          });
    const emails = input.inspectorEmails === undefined ? undefined : toList(input.inspectorEmails);
    const fromRestService = input.fromRestService?.trim();
    const values: Record<string, unknown> = {
      client_names: toList(input.clientNames),
      inspection_date: input.inspectionDate,
    };
    for (const [field, column, isList] of OPTIONAL_FIELDS) {
      const value = input[field] as string | string[] | undefined;
      if (value !== undefined) values[column] = isList ? toList(value) : value;
    }

    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      let inspectors: { id: string | null; email: string }[] = [];
      if (emails && emails.length > 0) {
        // Each address once, at its first occurrence, as sent, folded by PostgreSQL's lower() as the
        // users' unique index folds: the service's rule (JavaScript's toLowerCase() differs, e.g. for İ).
        ({ rows: inspectors } = await client.query<{ id: string | null; email: string }>(
          `SELECT id, email FROM (
             SELECT DISTINCT ON (lower(w.email)) u.id, w.email, w.n
               FROM unnest($2::text[]) WITH ORDINALITY AS w(email, n)
               LEFT JOIN users u ON u.company_id = $1 AND lower(u.email) = lower(w.email)
              ORDER BY lower(w.email), w.n
           ) wanted ORDER BY n`,
          [companyId, emails],
        ));
        const unknown = inspectors.filter((i) => i.id === null).map((i) => i.email);
        if (unknown.length > 0) {
          throw new HttpError(400, `inspectorEmails are not users of this company: ${unknown.join(', ')}`);
        }
      }
      const columns = ['company_id', 'rest_id', 'from_rest_service', ...Object.keys(values)];
      const updated = [...Object.keys(values), ...(fromRestService ? ['from_rest_service'] : [])];
      const { rows } = await client.query<{ id: string; created: boolean }>(
        `INSERT INTO reports (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})
         ON CONFLICT (company_id, rest_id) DO UPDATE
            SET ${updated.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}, updated_at = now()
          WHERE reports.status <> 'published'
         RETURNING id, (xmax = 0) AS created`,
        [companyId, input.restId ?? null, fromRestService || 'REST API', ...Object.values(values)],
      );
      const report = rows[0];
      if (!report)
        throw new HttpError(409, `report with restId ${input.restId} is published and can no longer be updated`);
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
      await client.query('COMMIT');
      const result: CreateResult = { result: 'ok', id: report.id };
      res.json(result);
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    } finally {
      client.release();
    }
  });

  const errorHandler: ErrorRequestHandler = (
    err: { status?: number; code?: string; message: string },
    req,
    res,
    _next,
  ) => {
    // Validator errors carry their status; PostgreSQL's data exceptions (class 22) are bad input.
    const status = err.status ?? (err.code?.startsWith('22') ? 400 : 500);
    if (status >= 500) req.log.error({ err }, 'request failed');
    res.status(status).json({ error: status >= 500 ? 'internal server error' : err.message });
  };
  app.use(errorHandler);
  return app;
}
