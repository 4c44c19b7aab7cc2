import { expect } from 'chai';
import { UPSERT } from '../../src/reports/write-statement.js';
import { pool } from '../support/harness.js';

// The write statement of reports must be planned as what it is: a few rows. PostgreSQL compiles a plan
// costed past jit_above_cost to machine code when JIT is on (its default), seconds of work for each run
// of a statement that takes milliseconds; a planner estimate far off (a set-returning function's default
// 1,000 rows) was enough to get there. Each text of the statement is held under that threshold by a
// wide margin, whatever the server's JIT setting.

/** The planner's total cost of the statement's plan for a batch, which it cannot see into. */
async function plannedCost(text: string): Promise<number> {
  const { rows } = await pool().query<{ 'QUERY PLAN': [{ Plan: { 'Total Cost': number } }] }>(
    `EXPLAIN (FORMAT JSON) ${text}`,
    ['[]'],
  );
  return rows[0]!['QUERY PLAN'][0].Plan['Total Cost'];
}

describe('the write statement of reports', () => {
  for (const [name, text] of Object.entries(UPSERT)) {
    it(`is planned (${name}) at a tenth of jit_above_cost or less`, async () => {
      const { rows } = await pool().query<{ threshold: string }>(
        "SELECT current_setting('jit_above_cost') AS threshold",
      );
      expect(await plannedCost(text)).to.be.below(Number(rows[0]!.threshold) / 10);
    });
  }
});
