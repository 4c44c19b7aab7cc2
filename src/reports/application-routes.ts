import { Router, type Response } from 'express';
import type { Report, ReportInput } from '../api-types.js';
import { COMPANY, requireCompany } from '../companies/index.js';
import { conflict, notFound } from '../core/errors.js';
import { quoted } from '../core/quoted.js';
import type { Pool } from '../db/pool.js';
import { findForCompany } from './read.js';
import { reportNotFound } from './wording.js';
import { startReport, type ReportWriter } from './write.js';

/** The application's own report operations: create one (as the inspectors' application does) and start it. */
export function applicationReportsRouter(db: Pool, writes: ReportWriter): Router {
  const router = Router();
  router.param('companyId', requireCompany(db));

  router.post(`${COMPANY}/reports`, async (req, res: Response<Report>) => {
    const companyId = req.params.companyId!;
    const { id } = await writes.createOrUpdate({ companyId }, req.body as ReportInput);
    res.status(201).json((await findForCompany(db, companyId, id))!);
  });

  router.post(`${COMPANY}/reports/:reportId/start`, async (req, res: Response<Report>) => {
    const { companyId, reportId } = req.params as { companyId: string; reportId: string };
    const status = await startReport(db, companyId, reportId);
    if (!status) throw notFound(reportNotFound(reportId));
    if (status === 'published') throw conflict(`report ${quoted(reportId)} is published`);
    res.json((await findForCompany(db, companyId, reportId))!);
  });

  return router;
}
