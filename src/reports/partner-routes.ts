import { Router, type Request, type Response } from 'express';
import type { CreateResult, ListReportsQuery, Report, ReportInput } from '../api-types.js';
import { refuse } from '../core/errors.js';
import type { Queryable } from '../db/pool.js';
import { fingerprint, IdempotencyKeys, idempotencyKey, replayKept } from './idempotency.js';
import { keyPrincipal, requestSince } from '../core/request-context.js';
import { reportNotFound } from './report-error-wording.js';
import type { Origin } from './fields.js';
import { cursorParam, encodeCursor } from './cursor.js';
import type { ReportWriter } from './write.js';
import type { ReportReads } from './cache.js';
import { pageLimit } from '../core/page-limit.js';

/**
 * The partner requests whose key their own write decides: POST /reports/new, whose statement finds its
 * API key at commit or writes nothing and responds "invalid API key" before anything else
 * (write-statement.ts, write.ts). requireApiKey lets them through on a cached key at once (its
 * checkedAtCommit); what they refuse before the statement (the body's shape, a header) reveals no data.
 */
export const writesCheckTheirKey = (req: Request) =>
  req.method === 'POST' && `${req.baseUrl}${req.path}` === '/reports/new';

/** The partner API's reports: writes go to `writes` (batched), reads to `reads` (a ReportCache in servers). */
export function reportsRouter(db: Queryable, reads: ReportReads, writes: ReportWriter): Router {
  const router = Router();
  const keys = new IdempotencyKeys(db);

  router.post('/reports/new', async (req, res: Response<CreateResult>) => {
    const { companyId, integrationId, keyId, ownerCompanyId } = keyPrincipal(req);
    const origin = { companyId, integrationId, keyId, ownerCompanyId };
    const key = idempotencyKey(req);
    if (key === undefined) {
      const { id } = await writes.createOrUpdate(origin, req.body as ReportInput);
      res.json({ result: 'ok', id });
      return;
    }
    res.json(await createWithKey(keys, writes, origin, key, req.body as ReportInput));
  });

  router.get('/reports', async (req, res: Response<Report[]>) => {
    const query = req.query as ListReportsQuery;
    const limit = pageLimit(req);
    const after = cursorParam('after', query.after);
    const page = await reads.list(
      keyPrincipal(req).companyId,
      { limit, after, restId: query.restId },
      requestSince(req),
    );
    if (page.next) {
      const next = new URLSearchParams({ limit: String(limit), after: encodeCursor(page.next) });
      if (query.restId !== undefined) next.set('restId', query.restId);
      res.set('Link', `</reports?${next}>; rel="next"`);
    }
    res.json(page.reports);
  });

  router.get('/reports/:reportId', async (req, res: Response<Report>) => {
    const report = await reads.find(keyPrincipal(req).companyId, req.params.reportId, requestSince(req));
    if (!report) throw refuse.notFound(reportNotFound(req.params.reportId!));
    res.json(report);
  });

  return router;
}

/**
 * A create sent with an Idempotency-Key: its response, or the first request's again (see idempotency.ts).
 * The key is stored by the write itself, with its report; a refusal is kept right after it.
 */
async function createWithKey(
  keys: IdempotencyKeys,
  writes: ReportWriter,
  origin: Origin,
  key: string,
  input: ReportInput,
): Promise<CreateResult> {
  keys.hold(origin.companyId, key);
  try {
    const idempotency = { key, print: fingerprint(input) };
    let outcome;
    try {
      outcome = await writes.createOrUpdate(origin, input, idempotency);
    } catch (err) {
      // A refusal (400, 409) is kept for the key's retries; one that cannot be (the database gone) is not.
      await keys.keepRefusal(origin.companyId, idempotency, err).catch(() => undefined);
      throw err;
    }
    return { result: 'ok', id: 'kept' in outcome ? replayKept(outcome.kept) : outcome.id };
  } finally {
    keys.done(origin.companyId, key);
  }
}
