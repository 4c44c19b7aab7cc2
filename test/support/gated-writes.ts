import type { Queryable } from '../../src/db/pool.js';
import type { SentOnce } from '../../src/db/sent-once.js';
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
      const config = args[0] as { name?: string; values?: unknown[] };
      if (config?.name?.startsWith('report-upsert')) {
        // The batch's input is read once (SentOnce): read here, it is sent on as its text.
        const text = (config.values![0] as SentOnce).toPostgres();
        sizes.push((JSON.parse(text) as unknown[]).length);
        args[0] = { ...config, values: [text, ...config.values!.slice(1)] };
        await opened;
      }
      return (db.query as (...a: unknown[]) => Promise<unknown>)(...args);
    }) as Queryable['query'],
  };
  return { db: gated, sizes, open };
}
