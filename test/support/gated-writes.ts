import type { Queryable } from '../../src/db/pool.js';
import { gate } from './wait.js';

/**
 * `db` behind a gate for report writes: every batch statement is recorded (its number of writes), and
 * each one sent before open() is held until then — the writes sent meanwhile wait for their turn, as
 * under load. Other queries pass straight through.
 */
export function gatedDatabase(db: Queryable) {
  const sizes: number[] = [];
  const { opened, open } = gate();
  const gated: Queryable = {
    query: (async (...args: unknown[]) => {
      const config = args[0] as { name?: string; values?: string[] };
      if (config?.name?.startsWith('report-upsert')) {
        sizes.push((JSON.parse(config.values![0]!) as unknown[]).length);
        await opened;
      }
      return (db.query as (...a: unknown[]) => Promise<unknown>)(...args);
    }) as Queryable['query'],
  };
  return { db: gated, sizes, open };
}
