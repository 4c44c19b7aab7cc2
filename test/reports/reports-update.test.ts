import { expect } from 'chai';
import { api, newApp, newCompany, pool, reportInput, unique, type TestCompany } from '../support/harness.js';

describe('POST /reports/new: update by restId', () => {
  let company: TestCompany;
  before(async () => {
    company = await newCompany([
      { name: 'Dana Inspector', email: 'dana@example.com' },
      { name: 'Lee Inspector', email: 'lee@example.com' },
    ]);
  });

  const send = (body: Record<string, unknown>, key = company.key) =>
    api().post('/reports/new').set('X-API-KEY', key).send(body);
  const get = async (id: string) => (await api().get(`/reports/${id}`).set('X-API-KEY', company.key).expect(200)).body;
  const countWithRestId = async (companyId: string, restId: string) =>
    Number(
      (
        await pool().query('SELECT count(*) AS n FROM reports WHERE company_id = $1 AND rest_id = $2', [
          companyId,
          restId,
        ])
      ).rows[0].n,
    );

  const full = (restId: string) =>
    reportInput({
      restId,
      fromRestService: 'Acme CRM',
      clientNames: ['Jordan Smith'],
      clientEmails: 'jordan@example.com',
      clientPhones: '555 0100',
      address: '12 Elm Street',
      invoiceItems: ['Home inspection: $450'],
      yearBuilt: '1987',
      squareFeet: '2150',
      notes: 'Gate code 4321.',
      inspectorEmails: 'dana@example.com',
      agentName: 'Riley',
      agentEmail: 'riley@example.com',
      agentPhone: '555 0199',
    });

  it('updates the existing report when restId matches: same status, same shape, same id', async () => {
    const restId = unique('crm');
    const first = await send(full(restId)).expect(200);
    const second = await send(reportInput({ restId, clientNames: 'Casey Smith' })).expect(200);
    expect(second.body).to.deep.equal({ result: 'ok', id: first.body.id });
    expect(await countWithRestId(company.companyId, restId)).to.equal(1);
    expect((await get(first.body.id)).clientName).to.equal('Casey Smith');
  });

  it('merges: a field absent from the body keeps its stored value', async () => {
    const restId = unique('crm');
    const { body } = await send(full(restId)).expect(200);
    const before = await get(body.id);
    await send(reportInput({ restId, clientNames: 'Jordan Smith', inspectionDate: '2026-04-01' })).expect(200);
    const after = await get(body.id);
    expect(after.inspectionDate).to.equal('2026-04-01T00:00:00.000Z');
    const kept = { ...before, inspectionDate: after.inspectionDate, updatedAt: after.updatedAt };
    expect(after).to.deep.equal(kept);
    expect(after.updatedAt > before.updatedAt).to.equal(true);
    expect(after.createdAt).to.equal(before.createdAt);
  });

  it('merges: a field present replaces the stored value, "" and [] clear it', async () => {
    const restId = unique('crm');
    const { body } = await send(full(restId)).expect(200);
    await send(
      reportInput({
        restId,
        clientNames: ['New', 'Names'],
        clientEmails: [],
        clientPhones: '',
        address: '',
        invoiceItems: [],
        yearBuilt: '',
        notes: 'Replaced.',
        inspectorEmails: ['lee@example.com'],
        agentEmail: '',
      }),
    ).expect(200);
    const after = await get(body.id);
    expect(after).to.include({
      clientName: 'New, Names',
      clientEmail: '',
      clientPhone: '',
      address: '',
      yearBuilt: '',
      squareFeet: '2150',
      inspectorNotes: 'Replaced.',
      inspectorName: 'Lee Inspector',
      inspectorEmail: 'lee@example.com',
      agentEmail: '',
      agentName: 'Riley',
    });
    expect(after.invoiceItems).to.deep.equal([]);
    await send(reportInput({ restId, inspectorEmails: [] })).expect(200);
    expect((await get(body.id)).inspectorName).to.equal('');
  });

  it('still requires clientNames and inspectionDate on an update', async () => {
    const restId = unique('crm');
    await send(full(restId)).expect(200);
    expect((await send({ restId, inspectionDate: '2026-03-14' }).expect(400)).body.error).to.equal(
      'clientNames is required',
    );
    expect((await send({ restId, clientNames: 'A' }).expect(400)).body.error).to.equal('inspectionDate is required');
  });

  it('keeps fromRestService unless a non-blank value is sent', async () => {
    const restId = unique('crm');
    const { body } = await send(full(restId)).expect(200);
    await send(reportInput({ restId })).expect(200);
    expect((await get(body.id)).fromRestService).to.equal('Acme CRM');
    await send(reportInput({ restId, fromRestService: '' })).expect(200);
    expect((await get(body.id)).fromRestService).to.equal('Acme CRM');
    await send(reportInput({ restId, fromRestService: 'Other CRM' })).expect(200);
    expect((await get(body.id)).fromRestService).to.equal('Other CRM');
  });

  it('changes nothing when the update is refused (unknown inspector)', async () => {
    const restId = unique('crm');
    const { body } = await send(full(restId)).expect(200);
    const before = await get(body.id);
    await send(reportInput({ restId, clientNames: 'Changed', inspectorEmails: ['ghost@example.com'] })).expect(400);
    await send(reportInput({ restId, clientNames: 'Changed', invoiceItems: ['bad item'] })).expect(400);
    expect(await get(body.id)).to.deep.equal(before);
  });

  it('answers 409 for a published report and changes nothing', async () => {
    const restId = unique('crm');
    const { body } = await send(full(restId)).expect(200);
    await pool().query(
      `UPDATE reports SET status = 'published', published_url = 'https://reports.example.com/r/1' WHERE company_id = $1 AND id = $2`,
      [company.companyId, body.id],
    );
    const before = await get(body.id);
    const res = await send(reportInput({ restId, clientNames: 'Changed', inspectorEmails: 'lee@example.com' })).expect(
      409,
    );
    expect(res.body).to.deep.equal({ error: `report with restId ${restId} is published and can no longer be updated` });
    expect(await get(body.id)).to.deep.equal(before);
  });

  it('updates a report that is in progress', async () => {
    const restId = unique('crm');
    const { body } = await send(full(restId)).expect(200);
    await pool().query(`UPDATE reports SET status = 'in_progress' WHERE company_id = $1 AND id = $2`, [
      company.companyId,
      body.id,
    ]);
    await send(reportInput({ restId, clientNames: 'Changed' })).expect(200);
    expect(await get(body.id)).to.include({ clientName: 'Changed', status: 'in_progress' });
  });

  it('makes one report for 20 parallel creates with one new restId, all answering the same id', async () => {
    const restId = unique('burst');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        send(
          reportInput({
            restId,
            clientNames: `Client ${i}`,
            inspectorEmails: ['dana@example.com', 'lee@example.com'],
            invoiceItems: [`Item ${i}: $${i}`],
          }),
        ),
      ),
    );
    for (const res of results) expect(res.status).to.equal(200);
    expect(new Set(results.map((r) => r.body.id)).size).to.equal(1);
    expect(await countWithRestId(company.companyId, restId)).to.equal(1);
    const report = await get(results[0]!.body.id);
    expect(report.inspectorName).to.equal('Dana Inspector, Lee Inspector');
    expect(report.invoiceItems).to.have.length(1);
  });

  it('makes one report when two server processes receive the same new restId at once', async () => {
    const [one, two] = [newApp(), newApp()];
    try {
      const restId = unique('two-procs');
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          api(i % 2 ? one.app : two.app)
            .post('/reports/new')
            .set('X-API-KEY', company.key)
            .send(reportInput({ restId })),
        ),
      );
      for (const res of results) expect(res.status).to.equal(200);
      expect(new Set(results.map((r) => r.body.id)).size).to.equal(1);
      expect(await countWithRestId(company.companyId, restId)).to.equal(1);
    } finally {
      await Promise.all([one.pool.end(), two.pool.end()]);
    }
  });

  it('scopes restId to the company: two companies keep separate reports with the same restId', async () => {
    const other = await newCompany();
    const restId = unique('shared');
    const mine = await send(reportInput({ restId, clientNames: 'Mine' })).expect(200);
    const theirs = await send(reportInput({ restId, clientNames: 'Theirs' }), other.key).expect(200);
    expect(theirs.body.id).to.not.equal(mine.body.id);
    expect((await get(mine.body.id)).clientName).to.equal('Mine');
    const theirList = await api().get(`/reports?restId=${restId}`).set('X-API-KEY', other.key).expect(200);
    expect(theirList.body.map((r: { clientName: string }) => r.clientName)).to.deep.equal(['Theirs']);
  });
});
