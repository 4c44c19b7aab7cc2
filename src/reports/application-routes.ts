import { Router, type Response } from 'express';
import type { ListApplicationReportsQuery, Report, ReportInput } from '../api-types.js';
import { COMPANY, requireCompany } from '../companies/index.js';
import { refuse } from '../core/errors.js';
import { pageLimit } from '../core/page-limit.js';
import type { Pool } from '../db/pool.js';
import { cursorParam, encodeCursor } from './cursor.js';
import { findForCompany, listForCompany } from './read.js';
import { reportNotFound } from './report-error-wording.js';
import type { ReportWriter } from './write.js';

/**
 * The application's own report operations: its inbox (list and read) and create one (as the inspectors'
 * application does); starting and publishing one are the integrations component's routes, as both may
 * record an event. They read the database, not the partner API's cache: the application reads what it
 * has just written, and its reads are few.
 */
export function applicationReportsRouter(db: Pool, writes: ReportWriter): Router {
  const router = Router();
  router.param('companyId', requireCompany(db));

  router.get(`${COMPANY}/reports`, async (req, res: Response<Report[]>) => {
    const companyId = req.params.companyId!;
    const { after: cursor, status } = req.query as ListApplicationReportsQuery;
    const limit = pageLimit(req);
    const after = cursorParam('after', cursor);
    const page = await listForCompany(db, companyId, { limit, after, status });
    if (page.next) {
      const next = new URLSearchParams({ limit: String(limit), after: encodeCursor(page.next) });
      if (status !== undefined) next.set('status', status);
      res.set('Link', `</internal/companies/${encodeURIComponent(companyId)}/reports?${next}>; rel="next"`);
    }
    res.json(page.reports);
  });

  router.get(`${COMPANY}/reports/:reportId`, async (req, res: Response<Report>) => {
    const { companyId, reportId } = req.params as { companyId: string; reportId: string };
    const report = await findForCompany(db, companyId, reportId);
    if (!report) throw refuse.notFound(reportNotFound(reportId));
    res.json(report);
  });

  router.post(`${COMPANY}/reports`, async (req, res: Response<Report>) => {
    const companyId = req.params.companyId!;
    const { id } = await writes.createOrUpdate({ companyId }, req.body as ReportInput);
    res.status(201).json((await findForCompany(db, companyId, id))!);
  });

  return router;
}
