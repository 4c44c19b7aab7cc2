import { conflict } from '../core/errors.js';
import type { Queryable } from '../db/pool.js';

/** A sandbox holds at most this many reports (creates past it are refused), each for at most SANDBOX_DAYS. */
export const SANDBOX_MAX_REPORTS = 10_000;
export const SANDBOX_DAYS = 30;

/**
 * 409 for a create that would take the sandbox past SANDBOX_MAX_REPORTS (an update of one of its
 * reports by restId is always let through). Checked before the write: concurrent creates may take it a
 * few reports past, never more than a company's requests in flight.
 */
export async function sandboxHasRoom(db: Queryable, companyId: string, restId: string | undefined): Promise<void> {
  const { rows } = await db.query<{ full: boolean; exists: boolean }>({
    name: 'sandbox-room',
    text: `SELECT (SELECT count(*) FROM (SELECT 1 FROM reports WHERE company_id = $1 LIMIT $3) r) >= $3 AS full,
                  EXISTS (SELECT 1 FROM reports WHERE company_id = $1 AND rest_id = $2) AS exists`,
    values: [companyId, restId ?? null, SANDBOX_MAX_REPORTS],
  });
  if (rows[0]!.full && !rows[0]!.exists) {
    throw conflict(
      `the sandbox holds ${SANDBOX_MAX_REPORTS.toLocaleString('en-US')} reports, its most: wipe it (DELETE /sandbox/reports) or let reports older than ${SANDBOX_DAYS} days expire`,
    );
  }
}

/** Every report of a sandbox gone (a partner's DELETE /sandbox/reports); never a live company's. */
export async function wipeSandbox(db: Queryable, companyId: string): Promise<void> {
  await db.query(
    'DELETE FROM reports WHERE company_id = $1 AND company_id IN (SELECT id FROM companies WHERE sandbox_of IS NOT NULL)',
    [companyId],
  );
}

/** Sandbox reports older than SANDBOX_DAYS go, a bounded number at a time. */
export async function expireSandboxReports(db: Queryable, limit = 10_000): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM reports WHERE ctid IN (
       SELECT r.ctid FROM reports r JOIN companies c ON c.id = r.company_id
        WHERE c.sandbox_of IS NOT NULL AND r.created_at < clock_timestamp() - interval '${SANDBOX_DAYS} days'
        LIMIT $1)`,
    [limit],
  );
  return rowCount ?? 0;
}
