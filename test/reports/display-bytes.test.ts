import { expect } from 'chai';
import { displayBytesSql } from '../../src/reports/display-bytes.js';
import { api, newCompany, pool, reportInput, unique } from '../support/harness.js';

// display_bytes (src/reports/display-bytes.ts): json_bytes, the length of a value as JSON text, is each
// field's term, and must count what to_json writes (migration 9's definition); it and
// report_display_bytes are inlined, not run as functions per call; the trigger keeps every report's
// value right through creates, updates and a write of the column itself. Migration 21 names this test
// by its earlier path, test/db/json-bytes.test.ts (a landed migration is never edited).

/** Every character PostgreSQL's JSON escapes (all controls but NUL, the quote, the backslash), and some it does not. */
const CONTROLS = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).join('');
const TEXTS = ['', 'abc', 'a"b\\c', CONTROLS, "\u007f\u2028é€😀<>&'", `${'x'.repeat(5_000)}"\n`];
const ARRAYS = [[], [''], ['a', 'b'], [null, 'x'], TEXTS, [CONTROLS, null, '😀']];

describe('display_bytes of a report', () => {
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

  it('is inlined: a query over the columns computes json_object, and calls no function of migrations 21 and 22', async () => {
    const columns =
      'address, client_names, client_emails, client_phones, agent_name, agent_email, agent_phone, inspector_names, inspector_emails, notes, from_rest_service, rest_id, published_url, year_built, square_feet, invoice_descriptions, invoice_prices';
    const { rows } = await pool().query<{ 'QUERY PLAN': string }>(
      `EXPLAIN VERBOSE SELECT json_bytes(address), json_bytes(client_names), report_display_bytes(${columns}) FROM reports`,
    );
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(plan).to.match(/\bjson_object"?\(/);
    expect(plan).not.to.match(/json_bytes|report_display_bytes/);
  });

  it("keeps a report's display_bytes as to_json counts it: created, updated, and its column written", async () => {
    const company = await newCompany([{ name: 'Dana "D" Inspector', email: 'dana@example.com' }]);
    const restId = unique('display-bytes');
    const body = reportInput({
      restId,
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
      const stored = async () => {
        const { rows } = await client.query<{ stored: number; expected: number }>(
          `SELECT display_bytes AS stored, ${expected} AS expected FROM reports WHERE company_id = $1 AND id = $2`,
          [company.companyId, created.id],
        );
        expect(rows).to.have.length(1);
        return rows[0]!;
      };
      const first = await stored();
      expect(first.stored).to.equal(first.expected);
      await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send(reportInput({ restId, notes: `${TEXTS[5]}${CONTROLS}`, invoiceItems: [] }))
        .expect(200);
      const updated = await stored();
      expect(updated.stored).to.equal(updated.expected).and.not.equal(first.stored);
      await client.query('UPDATE reports SET display_bytes = 1 WHERE company_id = $1 AND id = $2', [
        company.companyId,
        created.id,
      ]);
      expect((await stored()).stored).to.equal(updated.expected);
    } finally {
      client.release(true);
    }
  });
});
