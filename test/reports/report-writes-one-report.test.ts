import { expect } from 'chai';
import fc from 'fast-check';
import type { ReportInput } from '../../src/api-types.js';
import { createApp } from '../../src/app.js';
import { createKey, revokeKey } from '../../src/integrations/api-keys.js';
import type { Origin } from '../../src/reports/fields.js';
import { ReportWriter } from '../../src/reports/write.js';
import { loadSchemaFaker, validReportBody, type Body } from '../contract/support/requests.js';
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

/** Each write's answer, with ids as the place of the first write answered with that id. */
type Answer = { status: number; message?: string; id?: number; created?: boolean };

function answersOf(outcomes: PromiseSettledResult<{ id: string; created: boolean }>[]): Answer[] {
  const ids: string[] = [];
  return outcomes.map((o) => {
    if (o.status === 'rejected') {
      const err = o.reason as { status?: number; message: string };
      return { status: err.status ?? 500, message: err.message };
    }
    if (!ids.includes(o.value.id)) ids.push(o.value.id);
    return { status: 200, id: ids.indexOf(o.value.id), created: o.value.created };
  });
}

/** A generated write: who sends it (a partner's key, one revoked meanwhile, the application) and its body. */
type Sent = { from: 'partner' | 'revoked' | 'application'; body: ReportInput };

type Origins = Record<Sent['from'], Origin>;

const CLEARABLE = ['address', 'notes', 'agentName', 'agentEmail', 'agentPhone', 'yearBuilt', 'squareFeet'] as const;
const LISTS = ['clientEmails', 'clientPhones', 'invoiceItems', 'inspectorEmails'] as const;

describe('report writes: one report many times in one batch, against one at a time (property)', () => {
  const INSPECTORS = [
    { name: 'Dana Inspector', email: 'dana@example.com' },
    { name: 'Lee Inspector', email: 'lee@example.com' },
  ];

  /** A company's origins: its partner key, a key of its integration since revoked, the application. */
  async function originsOf(company: TestCompany): Promise<Origins> {
    const { rows } = await pool().query<{ id: string; integration_id: string }>(
      'SELECT id, integration_id FROM api_keys WHERE company_id = $1',
      [company.companyId],
    );
    const [{ id, integration_id: integrationId }] = rows as [(typeof rows)[0]];
    const revoked = await createKey(pool(), company.companyId);
    await revokeKey(pool(), company.companyId, revoked.id);
    return {
      partner: { companyId: company.companyId, integrationId, keyId: id },
      revoked: { companyId: company.companyId, integrationId, keyId: revoked.id },
      application: { companyId: company.companyId },
    };
  }

  const sentWrite = (restIds: string[]): fc.Arbitrary<Sent> =>
    fc
      .record({
        body: validReportBody({ inspectorEmails: INSPECTORS.map((i) => i.email) }, restIds),
        from: fc.constantFrom('partner', 'partner', 'partner', 'partner', 'application', 'revoked'),
        restId: fc.option(fc.constantFrom(...restIds), { nil: undefined, freq: 6 }),
        unknownInspector: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
        cleared: fc.subarray([...CLEARABLE, ...LISTS]),
        clearWith: fc.constantFrom('', [] as string[]),
        fromRestService: fc.constantFrom(undefined, '', '   ', 'Partner CRM', ' Other sync '),
      })
      .map(({ body, from, restId, unknownInspector, cleared, clearWith, fromRestService }) => {
        const input = { ...body } as Record<string, unknown>;
        if (restId === undefined) delete input.restId;
        else input.restId = restId;
        for (const field of cleared) input[field] = (LISTS as readonly string[]).includes(field) ? clearWith : '';
        if (fromRestService === undefined) delete input.fromRestService;
        else input.fromRestService = fromRestService;
        if (unknownInspector) input.inspectorEmails = [...[input.inspectorEmails ?? []].flat(), 'nobody@example.com'];
        return { from, body: input as unknown as ReportInput } as Sent;
      });

  const reportsOf = async (companyId: string) =>
    (
      await pool().query<{ report: string }>(
        `SELECT (to_jsonb(r) - '{id,company_id,integration_id,created_at,updated_at}'::text[])::text AS report
           FROM reports r WHERE company_id = $1`,
        [companyId],
      )
    ).rows
      .map((r) => r.report)
      .sort();

  /** As a write of its own: createOrUpdate throws at once for bad invoice items, as a refusal. */
  const settle = (p: () => Promise<{ id: string; created: boolean }>) =>
    (async () => p())().then(
      (value) => ({ status: 'fulfilled', value }) as const,
      (reason: unknown) => ({ status: 'rejected', reason }) as const,
    );

  it('answers each write and leaves each report as the same writes one at a time do', async function () {
    this.timeout(180_000);
    await loadSchemaFaker();
    const [alone, batched, holder] = await Promise.all([newCompany(INSPECTORS), newCompany(INSPECTORS), newCompany()]);
    const [aloneFrom, batchedFrom, holderFrom] = (await Promise.all([alone, batched, holder].map(originsOf))) as [
      Origins,
      Origins,
      Origins,
    ];
    const restIds = [unique('rest'), unique('rest'), unique('published')];
    // The third restId's report is published in both companies: every write of it is refused.
    for (const from of [aloneFrom, batchedFrom]) {
      const { id } = await new ReportWriter(pool()).createOrUpdate(from.partner, {
        ...reportInput(),
        restId: restIds[2],
      });
      await pool().query(`UPDATE reports SET status = 'published' WHERE id = $1`, [id]);
    }
    await fc.assert(
      fc.asyncProperty(fc.array(sentWrite(restIds), { minLength: 1, maxLength: 12 }), async (writes) => {
        const plain = new ReportWriter(pool());
        const one = [];
        for (const { from, body } of writes) one.push(await settle(() => plain.createOrUpdate(aloneFrom[from], body)));

        const { db, sizes, open } = gatedDatabase(pool());
        const writer = new ReportWriter(db, { batchesInFlight: 1 });
        // Another company's write holds the one batch in flight: all of these wait, then leave together.
        const held = writer.createOrUpdate(holderFrom.partner, reportInput() as ReportInput);
        await until(() => sizes.length === 1, 'holding the first write in the database');
        const queued = writes.map(({ from, body }) => settle(() => writer.createOrUpdate(batchedFrom[from], body)));
        await until(() => writer.waiting === writes.length, 'queuing the writes');
        open();
        await held;
        const together = await Promise.all(queued);
        expect(sizes).to.deep.equal([1, writes.length]);
        expect(answersOf(together)).to.deep.equal(answersOf(one));
        expect(await reportsOf(batched.companyId)).to.deep.equal(await reportsOf(alone.companyId));
      }),
      { numRuns: 30, endOnFailure: true },
    );
  });
});
