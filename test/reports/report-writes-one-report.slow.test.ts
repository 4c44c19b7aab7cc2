import { expect } from 'chai';
import fc from 'fast-check';
import type { ReportInput } from '../../src/api-types.js';
import { createKey, revokeKey } from '../../src/integrations/keys/api-keys.js';
import type { Origin } from '../../src/reports/fields.js';
import { ReportWriter } from '../../src/reports/write.js';
import { loadSchemaFaker, validReportBody } from '../contract/support/requests.js';
import { newCompany, pool, reportInput, unique, type TestCompany } from '../support/harness.js';
import { reportRowsOf } from '../support/report-rows.js';
import { gatedDatabase } from '../support/gated-writes.js';
import { until } from '../support/wait.js';

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
        expect(await reportRowsOf(batched.companyId)).to.deep.equal(await reportRowsOf(alone.companyId));
      }),
      { numRuns: 30, endOnFailure: true },
    );
  });
});
