import type { Queryable } from '../db/pool.js';
import { isUuid } from '../core/ids.js';

/**
 * Moves a new report to in_progress (an inspector applied a template); a report in progress stays
 * as it is. Answers the status found, or undefined for no such report.
 */
export async function startReport(db: Queryable, companyId: string, reportId: string): Promise<string | undefined> {
  if (!isUuid(reportId)) return undefined;
  const { rows } = await db.query<{ status: string }>(
    `WITH found AS (
       SELECT status FROM reports WHERE company_id = $1 AND id = $2 FOR UPDATE
     ), started AS (
       UPDATE reports SET status = 'in_progress', updated_at = clock_timestamp()
        WHERE company_id = $1 AND id = $2 AND status = 'new'
     )
     SELECT status FROM found`,
    [companyId, reportId],
  );
  return rows[0]?.status;
}
