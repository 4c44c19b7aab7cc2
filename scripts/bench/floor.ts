/**
 * The benchmark's floor: the service's own data layer (the same pool settings, the same prepared
 * statements, the same rows and JSON) behind a bare Express 5, with every guarantee around it taken
 * away — no OpenAPI validation of requests or responses, no request log, no metrics, no security or
 * cache headers, no body budgets or text checks, and API keys read once and trusted for good (no
 * revocation barrier). Never a way to run the service: it bounds what any change on the Node side could
 * still win, since the service can at best do this much work per request. Run as a script: DATABASE_URL,
 * PORT; SIGTERM stops it. test/bench/floor.test.ts checks that it answers what the service answers.
 */
import { pathToFileURL } from 'node:url';
import express, { type ErrorRequestHandler, type Express, type Request } from 'express';
import type { ReportInput } from '../../src/api-types.js';
import { createPool, type Pool } from '../../src/db/pool.js';
import { authenticate, type KeyPrincipal } from '../../src/integrations/api-keys.js';
import { decodeCursor, encodeCursor } from '../../src/reports/cursor.js';
import { ReportWriter } from '../../src/reports/write.js';
import { findForCompany, listForCompany } from '../../src/reports/read.js';

export function createFloorApp(db: Pool): Express {
  const keys = new Map<string, KeyPrincipal | undefined>();
  async function principal(req: Request): Promise<KeyPrincipal> {
    const key = req.get('x-api-key') ?? '';
    if (!keys.has(key)) keys.set(key, await authenticate(db, key));
    const found = keys.get(key);
    if (!found) throw Object.assign(new Error('invalid API key'), { status: 400 });
    return found;
  }

  const writes = new ReportWriter(db);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.get('/reports/:reportId', async (req, res) => {
    const report = await findForCompany(db, (await principal(req)).companyId, req.params.reportId);
    if (!report) res.status(404).json({ error: 'not found' });
    else res.json(report);
  });
  app.get('/reports', async (req, res) => {
    const query = req.query as { limit?: string; after?: string };
    const limit = Number(query.limit ?? 20);
    const after = query.after === undefined ? undefined : decodeCursor(query.after);
    const page = await listForCompany(db, (await principal(req)).companyId, { limit, after });
    if (page.next) res.set('Link', `</reports?limit=${limit}&after=${encodeCursor(page.next)}>; rel="next"`);
    res.json(page.reports);
  });
  app.post('/reports/new', express.json({ limit: '1mb' }), async (req, res) => {
    const { companyId, integrationId } = await principal(req);
    const { id } = await writes.createOrUpdate({ companyId, integrationId }, req.body as ReportInput);
    res.json({ result: 'ok', id });
  });
  const errors: ErrorRequestHandler = (err: { status?: number; message?: string }, _req, res, _next) => {
    res.status(err.status ?? 500).json({ error: err.message ?? 'error' });
  };
  app.use(errors);
  return app;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const db = createPool({ connectionString: process.env.DATABASE_URL! });
  const server = createFloorApp(db).listen(Number(process.env.PORT ?? 0), '127.0.0.1');
  process.on('SIGTERM', () => server.close(() => void db.end().then(() => process.exit(0))));
}
