import { pool } from './harness.js';

/** A company's reports as rows, without what differs between two runs of the same writes (ids, times), sorted. */
export async function reportRowsOf(companyId: string): Promise<string[]> {
  const { rows } = await pool().query<{ report: string }>(
    `SELECT (to_jsonb(r) - '{id,company_id,integration_id,created_at,updated_at}'::text[])::text AS report
       FROM reports r WHERE company_id = $1`,
    [companyId],
  );
  return rows.map((r) => r.report).sort();
}
