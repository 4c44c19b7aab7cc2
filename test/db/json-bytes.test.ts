import { expect } from 'chai';
import { displayBytesSql } from '../../src/reports/fields.js';
import { api, newCompany, pool, reportInput, unique } from '../support/harness.js';

/**
 * json_bytes (migration 21), the length of a value as JSON text, is display_bytes' term for each field:
 * it must count what to_json writes (migration 9's definition), and be inlined into the statements that
 * write reports, not run as a function per call.
 */

/** Every character PostgreSQL's JSON escapes (all controls but NUL, the quote, the backslash), and some it does not. */
const CONTROLS = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).join('');
const TEXTS = ['', 'abc', 'a"b\\c', CONTROLS, "\u007f\u2028é€😀<>&'", `${'x'.repeat(5_000)}"\n`];
const ARRAYS = [[], [''], ['a', 'b'], [null, 'x'], TEXTS, [CONTROLS, null, '😀']];

describe('json_bytes (display_bytes of a report)', () => {
  it('counts what to_json writes, for text and arrays of text', async () => {
    const { rows: texts } = await pool().query<{ got: number; want: number }>(
      `SELECT json_bytes(v) AS got, octet_length(to_json(v)::text) AS want FROM unnest($1::text[]) v`,
      [TEXTS],
    );
    expect(texts.map((r) => r.got)).to.deep.equal(texts.map((r) => r.want));
    const { rows: arrays } = await pool().query<{ got: number; want: number }>(
      `SELECT json_bytes(v) AS got, octet_length(to_json(v)::text) AS want
         FROM jsonb_array_elements($1::jsonb) a,
              LATERAL (SELECT ARRAY(SELECT jsonb_array_elements_text(a.value))) t(v)
       UNION ALL
       -- An array whose first index is not 1.
       SELECT json_bytes(v), octet_length(to_json(v)::text) FROM (SELECT '[0:1]={a,"b\\""}'::text[]) t(v)`,
      [JSON.stringify(ARRAYS)],
    );
    expect(arrays).to.have.length(ARRAYS.length + 1);
    expect(arrays.map((r) => r.got)).to.deep.equal(arrays.map((r) => r.want));
  });

  it('is inlined: a query over the columns computes json_object, and calls no json_bytes', async () => {
    const { rows } = await pool().query<{ 'QUERY PLAN': string }>(
      'EXPLAIN VERBOSE SELECT json_bytes(address), json_bytes(client_names) FROM reports',
    );
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(plan).to.match(/\bjson_object"?\(/);
    expect(plan).not.to.include('json_bytes(');
  });

  it("stores a created report's display_bytes as to_json counts it", async () => {
    const company = await newCompany([{ name: 'Dana "D" Inspector', email: 'dana@example.com' }]);
    const body = reportInput({
      restId: unique('json-bytes'),
      clientNames: ['Jordan "J" Smith', CONTROLS, '😀'],
      address: TEXTS[4],
      notes: TEXTS[5],
      inspectorEmails: 'dana@example.com',
      invoiceItems: ['Radon\ttest: $150', 'Mold "air" sample: $75'],
    });
    const { body: created } = await api().post('/reports/new').set('X-API-KEY', company.key).send(body).expect(200);
    const client = await pool().connect();
    try {
      // Migration 9's definition, beside the table's.
      await client.query(`CREATE FUNCTION pg_temp.to_json_bytes(value anyelement) RETURNS integer
                            LANGUAGE sql AS 'SELECT octet_length(to_json(value)::text)'`);
      const expected = displayBytesSql().replaceAll('json_bytes(', 'pg_temp.to_json_bytes(');
      const { rows } = await client.query<{ stored: number; expected: number }>(
        `SELECT display_bytes AS stored, ${expected} AS expected FROM reports WHERE company_id = $1 AND id = $2`,
        [company.companyId, created.id],
      );
      expect(rows).to.have.length(1);
      expect(rows[0]!.stored).to.equal(rows[0]!.expected);
    } finally {
      client.release(true);
    }
  });
});
