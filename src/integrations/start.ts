import type { Report } from '../api-types.js';
import { withTransaction, type Pool } from '../db/pool.js';
import { markStarted } from '../reports/index.js';
import { recordReportEvent } from './report-events.js';

/**
 * Starts a report (an inspector applied a template) through the reports component and, when it left
 * `new` with this call, records its `report.started` event in the same transaction, so the event exists
 * exactly when the start does. The background worker sends it: the start never waits for a receiver.
 * 404 for no such report, 409 for a published one (status.ts).
 */
export function startReport(pool: Pool, companyId: string, reportId: string): Promise<Report> {
  return withTransaction(pool, async (db) => {
    const { report, startedNow, ...source } = await markStarted(db, companyId, reportId);
    if (startedNow) await recordReportEvent(db, companyId, 'report.started', report, source);
    return report;
  });
}
