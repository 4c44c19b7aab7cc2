import type { Report } from '../../api-types.js';
import { withTransaction, type Pool } from '../../db/pool.js';
import { markStarted } from '../../reports/index.js';
import { recordReportEvent } from './report-events.js';
import { placeEvents } from './feed-positions.js';
import { recordAudit, type Doer } from '../../audit/index.js';
import { startedEntry } from './report-audit.js';

/**
 * Starts a report (an inspector applied a template) through the reports component and, when it left
 * `new` with this call, records its `report.started` event in the same transaction, so the event exists
 * exactly when the start does, and has it placed in the feed after the commit. The background worker sends
 * it: the start never waits for a receiver. A start that changes the report is recorded in the audit trail.
 * 404 for no such report, 409 for a published one (status.ts).
 */
export async function startReport(pool: Pool, companyId: string, reportId: string, by: Doer): Promise<Report> {
  const { report, eventId } = await withTransaction(pool, async (db) => {
    const { report, startedNow, ...source } = await markStarted(db, companyId, reportId);
    if (startedNow) await recordAudit(db, by, startedEntry(companyId, reportId, by));
    return {
      report,
      eventId: startedNow && (await recordReportEvent(db, companyId, 'report.started', report, source)),
    };
  });
  // Into the feed once committed, without waiting (other companies' events may be placed first); when
  // placing fails, a later placer places it.
  if (eventId) void placeEvents(pool).catch(() => undefined);
  return report;
}
