import { Router, type RequestParamHandler, type Response } from 'express';
import type { AuditEvent, ListAuditEventsQuery } from '../api-types.js';
import { pageLimit } from '../core/page-limit.js';
import type { Pool } from '../db/pool.js';
import { listAudit } from './audit.js';

/**
 * The application's view of a company's audit trail: newest first, filtered, with the next page's Link.
 * The composition passes the companies component's guard of `:companyId` (404 for an unknown company), so
 * that the companies component may record its people's actions here without a circle of imports.
 */
export function auditRouter(db: Pool, requireCompany: RequestParamHandler): Router {
  const router = Router();
  router.param('companyId', requireCompany);

  router.get('/internal/companies/:companyId/audit-events', async (req, res: Response<AuditEvent[]>) => {
    const companyId = req.params.companyId!;
    const { before, actor, action } = req.query as ListAuditEventsQuery;
    const limit = pageLimit(req);
    const { entries, more } = await listAudit(db, companyId, { limit, before, actor, action });
    const last = entries.at(-1);
    if (more && last) {
      const next = new URLSearchParams({ limit: String(limit), before: last.id });
      if (actor) next.set('actor', actor);
      if (action) next.set('action', action);
      res.set('Link', `</internal/companies/${companyId}/audit-events?${next}>; rel="next"`);
    }
    res.json(entries);
  });
  return router;
}
