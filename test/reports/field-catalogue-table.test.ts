import { expect } from 'chai';
import { ALL_FIELDS } from '../../src/reports/fields.js';
import { displayBytesFunctionSql, displayBytesTriggerBody } from '../../src/reports/display-bytes.js';
import { pool } from '../support/harness.js';

/**
 * The field catalogue against the migrated reports table: every catalogue column exists with its type,
 * every other column is the service's own bookkeeping, and display_bytes is the catalogue's sum, kept by
 * its trigger (a migration that adds a field copies generated/report-display-bytes.sql).
 */

/** Columns of reports that are no field of a report: ownership, publishing state, derived sizes. */
const BOOKKEEPING = [
  'id',
  'company_id',
  'integration_id',
  'status',
  'created_at',
  'updated_at',
  'pending_webhook_id',
  'publish_claim',
  'publish_claimed_until',
  'display_bytes',
];

/** information_schema's udt_name of each SQL type the catalogue uses. */
const UDT: Record<string, string> = { text: 'text', 'text[]': '_text', date: 'date', 'bigint[]': '_int8' };

describe('the field catalogue (reports/fields.ts) and the reports table', () => {
  it('has every catalogue column with its type, and no column that is neither a field nor bookkeeping', async () => {
    const { rows } = await pool().query<{ column_name: string; udt_name: string }>(
      `SELECT column_name, udt_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = 'reports'`,
    );
    const table = new Map(rows.map((r) => [r.column_name, r.udt_name]));
    const catalogue = ALL_FIELDS.flatMap(([, field]) => Object.entries(field.columns));
    for (const [column, type] of catalogue) expect(table.get(column), column).to.equal(UDT[type]);
    const known = new Set([...catalogue.map(([c]) => c), ...BOOKKEEPING]);
    expect([...table.keys()].filter((c) => !known.has(c))).to.deep.equal([]);
  });

  it("computes display_bytes with the catalogue's functions, on every insert and update", async () => {
    const client = await pool().connect();
    try {
      // The catalogue's function beside the database's, both deparsed by PostgreSQL.
      await client.query(
        displayBytesFunctionSql().replace('FUNCTION report_display_bytes', 'FUNCTION pg_temp.report_display_bytes'),
      );
      const { rows } = await client.query<{ schema: string; args: string; body: string }>(
        `SELECT n.nspname AS schema, pg_get_function_arguments(p.oid) AS args, pg_get_function_sqlbody(p.oid) AS body
           FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE p.proname = 'report_display_bytes' AND (n.nspname = current_schema() OR n.oid = pg_my_temp_schema())`,
      );
      expect(rows).to.have.length(2);
      expect(rows[0]!.args).to.equal(rows[1]!.args);
      expect(rows[0]!.body).to.equal(rows[1]!.body);
      const { rows: triggers } = await client.query<{ body: string; definition: string }>(
        `SELECT p.prosrc AS body, pg_get_triggerdef(t.oid) AS definition
           FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
          WHERE t.tgrelid = 'reports'::regclass AND p.proname = 'set_report_display_bytes'`,
      );
      expect(triggers).to.have.length(1);
      expect(triggers[0]!.body).to.equal(displayBytesTriggerBody());
      expect(triggers[0]!.definition).to.match(/BEFORE INSERT OR UPDATE ON \S*reports FOR EACH ROW/);
    } finally {
      client.release(true);
    }
  });
});
