import { byKey } from '../audit/index.js';
import { Router, type RequestHandler, type Response } from 'express';
import type { PublishResult, Report, SandboxPublishInput } from '../api-types.js';
import { refuse } from '../core/errors.js';
import { keyPrincipal } from '../core/request-context.js';
import type { Pool } from '../db/pool.js';
import { reportNotFound, wipeSandbox } from '../reports/index.js';
import { publishReport, type PublishDelivery } from './events/publish.js';
import { startReport } from './events/start.js';

/** What a sandbox publish sends when the partner names no address: one that exists nowhere. */
const generatedUrl = (reportId: string) => `https://sandbox.invalid/reports/${encodeURIComponent(reportId)}`;

/** The sandbox's operations are a test key's: a live key gets 403 naming the key it needs. */
const requireTestKey: RequestHandler = (req, _res, next) => {
  if (keyPrincipal(req).mode !== 'test')
    throw refuse.forbidden('sandbox operations need a test key (irk_test_…): this request used a live key');
  next();
};

/**
 * The inspector's part, on demand, in a company's sandbox (test keys): start a report and publish it
 * (recording their events and sending their webhooks to the sandbox's own address, signed with its own
 * secret, as a live start or publish does), and wipe the sandbox. The key's company is the sandbox.
 */
export function sandboxRouter(db: Pool, delivery: PublishDelivery): Router {
  const router = Router();
  router.use('/sandbox', requireTestKey);

  router.post('/sandbox/reports/:reportId/start', async (req, res: Response<Report>) => {
    res.json(await startReport(db, keyPrincipal(req).companyId, req.params.reportId!, byKey(req)));
  });

  router.post('/sandbox/reports/:reportId/publish', async (req, res: Response<PublishResult>) => {
    const { companyId } = keyPrincipal(req);
    const reportId = req.params.reportId!;
    const body = req.body as SandboxPublishInput;
    const input = { ...body, publishedUrl: body.publishedUrl ?? generatedUrl(reportId) };
    const result = await publishReport(db, delivery, companyId, reportId, input, byKey(req));
    if (!result) throw refuse.notFound(reportNotFound(reportId));
    res.json(result);
  });

  router.delete('/sandbox/reports', async (req, res) => {
    await wipeSandbox(db, keyPrincipal(req).companyId);
    res.status(204).end();
  });

  return router;
}
