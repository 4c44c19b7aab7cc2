// The yardstick for `npm run bench`: the partner API as a competent engineer writes it in a day with
// the same packages and no tuning (normalized tables, a transaction per write). src/ never imports it.
// As a script it listens on 127.0.0.1:PORT with its tables in the schema `straightforward`.

import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import pg from 'pg';
import { pino, type Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import type { ListReportsQuery } from '../../../src/api-types.js';
import { noStore } from '../../../src/platform/http/no-store.js';
import { decodeCursor, encodeCursor, HttpError, SELECT_REPORT, toReport, type ReportRow } from './catalogue.js';
import { SCHEMA } from './schema.js';
import { createOrUpdateReport } from './write.js';

const SPEC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../openapi.yaml');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function requireKey(pool: pg.Pool): RequestHandler {
  return async (req, res, next) => {
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
}

function readReport(pool: pg.Pool): RequestHandler<{ reportId: string }> {
  return async (req, res) => {
    const { reportId } = req.params;
    const { rows } = UUID.test(reportId)
      ? await pool.query<ReportRow>(`${SELECT_REPORT} WHERE r.company_id = $1 AND r.id = $2`, [
          res.locals.companyId,
          reportId,
        ])
      : { rows: [] };
    if (!rows[0]) throw new HttpError(404, `report ${reportId} not found`);
    res.json(toReport(rows[0]));
  };
}

function listReports(pool: pg.Pool): RequestHandler {
  return async (req, res) => {
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
  };
}

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

export function createStraightforwardApp({ pool, logger }: { pool: pg.Pool; logger: Logger }): Express {
  const app = express();
  app.use(pinoHttp({ logger }));
  // The contract's Cache-Control on every answer, as any implementation of it must send.
  app.use(noStore);
  app.use(express.json({ limit: '1mb' }));
  app.use(['/auth', '/reports'], requireKey(pool));
  app.use(OpenApiValidator.middleware({ apiSpec: SPEC, validateRequests: true, validateResponses: true }));

  app.get('/auth', (_req, res) => {
    res.json({ result: 'ok' });
  });
  app.get('/reports/:reportId', readReport(pool));
  app.get('/reports', listReports(pool));
  app.post('/reports/new', createOrUpdateReport(pool));
  app.use(errorHandler);
  return app;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, options: `-c search_path=${SCHEMA}` });
  const logger = pino({ level: process.env.LOG_LEVEL ?? 'info', redact: ['req.headers["x-api-key"]'] });
  const server = createStraightforwardApp({ pool, logger }).listen(Number(process.env.PORT ?? 0), '127.0.0.1');
  process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
}
