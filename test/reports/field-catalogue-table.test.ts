import { expect } from 'chai';
import { ALL_FIELDS, displayBytesSql } from '../../src/reports/fields.js';
import { pool } from '../support/harness.js';

/**
 * The field catalogue against the migrated reports table: every catalogue column exists with its type,
 * every other column is the service's own bookkeeping, and display_bytes is the catalogue's sum (a
 * migration that adds a field copies generated/report-display-bytes.sql).
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

  it("computes display_bytes with the catalogue's expression", async () => {
    const client = await pool().connect();
    try {
      await client.query('BEGIN');
      // The same expression on a copy of the table's columns, deparsed by PostgreSQL as the column's is.
      await client.query('CREATE TEMP TABLE catalogue_reports (LIKE reports) ON COMMIT DROP');
      await client.query(
        `ALTER TABLE catalogue_reports ADD COLUMN expected integer GENERATED ALWAYS AS (${displayBytesSql()}) STORED`,
      );
      const { rows } = await client.query<{ relname: string; expression: string }>(
        `SELECT c.relname, pg_get_expr(d.adbin, d.adrelid) AS expression
           FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
           JOIN pg_class c ON c.oid = d.adrelid
          WHERE (c.oid = 'reports'::regclass AND a.attname = 'display_bytes')
             OR (c.oid = 'catalogue_reports'::regclass AND a.attname = 'expected')`,
      );
      const of = (table: string) => rows.find((r) => r.relname === table)?.expression;
      expect(of('reports')).to.be.a('string');
      expect(of('reports')).to.equal(of('catalogue_reports'));
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});
