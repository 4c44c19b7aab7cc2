import type { Queryable } from '../db/pool.js';
import { sweepExpiredKeys } from './idempotency.js';
import { expireSandboxReports } from './sandbox.js';

/**
 * What goes by itself, every `everyMs` in each process: Idempotency-Keys past their 24 hours and
 * sandbox reports past their 30 days (several processes sweeping at once only share the work).
 */
export function sweepEvery(db: Queryable, everyMs: number): { stop(): void } {
  const sweep = async () => {
    await sweepExpiredKeys(db);
    await expireSandboxReports(db);
  };
  const timer = setInterval(() => void sweep().catch(() => undefined), everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
