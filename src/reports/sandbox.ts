import { refuse } from '../core/errors.js';
import { isCheckViolation } from '../db/sqlstate.js';
import type { Queryable } from '../db/pool.js';

/** A sandbox holds at most this many reports (creates past it are refused), each for at most SANDBOX_DAYS. */
export const SANDBOX_MAX_REPORTS = 10_000;
export const SANDBOX_DAYS = 30;

/**
 * The bound is the database's (migration 17): each sandbox counts its reports, and a statement that
 * would create one past the bound fails on this constraint, whatever other processes create at once.
 * An update of one of its reports by restId creates nothing, and so is always let through.
 */
const ROOM_CONSTRAINT = 'companies_sandbox_room';

/** Whether a write statement failed for a sandbox's bound (SQLSTATE 23514 on its constraint). */
export const isSandboxFull = (err: unknown) => isCheckViolation(err, ROOM_CONSTRAINT);

/** 409 for a create past the bound: it asks for a retry once the sandbox has room, and is never kept for an Idempotency-Key. */
export const sandboxFull = () =>
  refuse.conflictForNow(
    `the sandbox holds ${SANDBOX_MAX_REPORTS.toLocaleString('en-US')} reports, its most: wipe it (DELETE /sandbox/reports) or let reports older than ${SANDBOX_DAYS} days expire`,
  );

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
