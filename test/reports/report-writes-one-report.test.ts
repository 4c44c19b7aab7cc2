import { expect } from 'chai';
import { createApp } from '../../src/app.js';
import { ReportWriter } from '../../src/reports/write.js';
import type { Body } from '../contract/support/requests.js';
import {
  api,
  appDeps,
  countingPool,
  newCompany,
  pool,
  reportInput,
  unique,
  type TestCompany,
  testLimits,
} from '../support/harness.js';
import { gatedDatabase } from '../support/gated-writes.js';
import { until } from '../support/wait.js';

/**
 * Writes of one report waiting together (reports/write.ts, write-statement.ts's `folded`): they
 * leave in one statement, applied in the order they came, each answered as it would be alone.
 */
describe('report writes: one report written many times in one batch', () => {
  const INSPECTORS = [
    { name: 'Dana Inspector', email: 'dana@example.com' },
    { name: 'Lee Inspector', email: 'lee@example.com' },
  ];
  let company: TestCompany;
  before(async () => {
    company = await newCompany(INSPECTORS);
  });

  /** An app whose writer runs one batch at a time: `first` is held in the database while `queued` wait. */
  async function sendBehindOne(first: Body, queued: Body[]) {
    const counting = countingPool();
    const { db, sizes, open } = gatedDatabase(counting.db);
    const writes = new ReportWriter(db, { batchesInFlight: 1 });
    // A burst of one report's writes in flight at once: a partner's share of the process that holds them.
    const target = createApp(appDeps(pool(), { writes, limits: testLimits(pool(), { perCompany: 64 }) }));
    const send = (body: Body) =>
      api(target)
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send(body)
        .then((r) => r);
    const held = send(first);
    await until(() => sizes.length === 1, 'holding the first write in the database');
    const rest = [];
    for (const body of queued) {
      rest.push(send(body));
      await until(() => writes.waiting === rest.length, `waiting with write ${rest.length}`);
    }
    open();
    return { responses: await Promise.all([held, ...rest]), sizes, queries: counting.queries };
  }

  const reportOf = async (restId: string) =>
    (
      await pool().query<{ id: string; notes: string; address: string; client_names: string[] }>(
        'SELECT id, notes, address, client_names FROM reports WHERE company_id = $1 AND rest_id = $2',
        [company.companyId, restId],
      )
    ).rows;

  it('sends a burst of writes of one report in ONE statement, merged in the order they came', async () => {
    const restId = unique('burst');
    const edits = Array.from({ length: 10 }, (_, i) =>
      reportInput({ restId, notes: `edit ${i}`, ...(i === 3 ? { address: '1 First Street' } : {}) }),
    );
    const { responses, sizes, queries } = await sendBehindOne(reportInput(), edits);
    expect(sizes).to.deep.equal([1, 10]);
    // The held write's statement and the burst's: nothing else went to the database through the writer.
    expect(queries()).to.equal(2);
    expect(responses.map((r) => r.status)).to.deep.equal(Array(11).fill(200));
    const [report] = await reportOf(restId);
    expect(responses.slice(1).map((r) => r.body.id)).to.deep.equal(Array(10).fill(report!.id));
    expect(report).to.include({ notes: 'edit 9', address: '1 First Street' });
  });

  it('refuses every write of a published report in the batch (409), reading why once', async () => {
    const restId = unique('published');
    const { body } = await api().post('/reports/new').set('X-API-KEY', company.key).send(reportInput({ restId }));
    await pool().query(`UPDATE reports SET status = 'published' WHERE id = $1`, [body.id]);
    const other = unique('other');
    const { responses, sizes, queries } = await sendBehindOne(reportInput(), [
      reportInput({ restId, notes: 'one' }),
      reportInput({ restId: other, notes: 'other' }),
      reportInput({ restId, notes: 'two' }),
      reportInput({ restId, notes: 'three' }),
    ]);
    expect(sizes).to.deep.equal([1, 4]);
    expect(responses.map((r) => r.status)).to.deep.equal([200, 409, 200, 409, 409]);
    for (const i of [1, 3, 4]) expect(responses[i]!.body.error).to.match(/is published/);
    expect(queries()).to.equal(3);
    expect((await reportOf(restId))[0]!.notes).to.equal('');
    expect((await reportOf(other))[0]!.notes).to.equal('other');
  });

  it('runs a refused batch again write by write, those of one restId in the order they came', async () => {
    const restId = unique('rerun');
    const refused = unique('refused');
    await pool().query(`
      CREATE OR REPLACE FUNCTION test_refuse_notes() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.notes = '${refused}' THEN RAISE EXCEPTION 'refused by the test'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_refuse_notes BEFORE INSERT OR UPDATE ON reports FOR EACH ROW EXECUTE FUNCTION test_refuse_notes();`);
    try {
      // The report folded from the batch's writes has the notes refused: the batch fails as a whole.
      const { responses, sizes } = await sendBehindOne(reportInput(), [
        reportInput({ restId, notes: 'first', address: 'kept' }),
        reportInput({ restId, notes: refused }),
        reportInput({ restId: unique('other') }),
        reportInput({ restId, agentName: 'last', address: 'later' }),
      ]);
      expect(sizes).to.deep.equal([1, 4, 1, 1, 1, 1]);
      expect(responses.map((r) => r.status)).to.deep.equal([200, 200, 500, 200, 200]);
      expect(await reportOf(restId)).to.have.length(1);
      const { rows } = await pool().query('SELECT notes, address, agent_name FROM reports WHERE id = $1', [
        responses[1]!.body.id,
      ]);
      // Alone, in the order they came: the last write's address over the first's.
      expect(rows[0]).to.deep.equal({ notes: 'first', address: 'later', agent_name: 'last' });
    } finally {
      await pool().query('DROP TRIGGER test_refuse_notes ON reports; DROP FUNCTION test_refuse_notes()');
    }
  });
});
