import { expect } from 'chai';
import {
  APP_TOKEN,
  api,
  everyFieldInput,
  newCompany,
  reportInput,
  unique,
  type TestCompany,
} from '../support/harness.js';

/** Creates a report through the API and reads it back. */
async function createAndGet(company: TestCompany, body: Record<string, unknown>) {
  const created = await api().post('/reports/new').set('X-API-KEY', company.key).send(body).expect(200);
  const res = await api().get(`/reports/${created.body.id}`).set('X-API-KEY', company.key).expect(200);
  return res.body;
}

const REPORT_FIELDS = [
  'id',
  'address',
  'clientName',
  'clientEmail',
  'clientPhone',
  'agentName',
  'agentEmail',
  'agentPhone',
  'inspectorName',
  'inspectorEmail',
  'inspectorNotes',
  'inspectionDate',
  'fromRestService',
  'restId',
  'publishedUrl',
  'status',
  'yearBuilt',
  'squareFeet',
  'invoiceItems',
  'createdAt',
  'updatedAt',
];

describe('POST /reports/new: create', () => {
  let company: TestCompany;
  before(async () => {
    company = await newCompany([
      { name: 'Dana Inspector', email: 'Dana@Example.com' },
      { name: 'Lee Inspector', email: 'lee@example.com' },
    ]);
  });

  it('answers 200 {"result": "ok", "id"} with the new report id', async () => {
    const res = await api().post('/reports/new').set('X-API-KEY', company.key).send(reportInput()).expect(200);
    expect(Object.keys(res.body)).to.have.members(['result', 'id']);
    expect(res.body.result).to.equal('ok');
    expect(res.body.id).to.be.a('string').and.not.equal('');
  });

  it('stores every input field and returns it in the output shape', async () => {
    const report = await createAndGet(
      company,
      everyFieldInput(['lee@example.com', 'dana@example.com'], { restId: unique('crm') }),
    );
    expect(Object.keys(report)).to.have.members(REPORT_FIELDS);
    expect(report).to.include({
      address: '12 Elm Street',
      clientName: 'Jordan Smith, Casey Smith',
      clientEmail: 'jordan@example.com, casey@example.com',
      clientPhone: '+1 555 0100, +1 555 0101',
      agentName: 'Riley Agent',
      agentEmail: 'riley@example.com',
      agentPhone: '+1 555 0199',
      inspectorName: 'Lee Inspector, Dana Inspector',
      inspectorEmail: 'lee@example.com, Dana@Example.com',
      inspectorNotes: 'Gate code 4321.',
      inspectionDate: '2026-03-14T00:00:00.000Z',
      fromRestService: 'Acme CRM',
      publishedUrl: '',
      status: 'new',
      yearBuilt: '1987',
      squareFeet: '2150',
    });
    expect(report.invoiceItems).to.deep.equal(['Home inspection: $450.00', 'Sewer scope: $1,250.50']);
    expect(report.createdAt).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(report.updatedAt).to.equal(report.createdAt);
  });

  it('gives absent fields as empty strings (never null) and a new report the status "new"', async () => {
    const report = await createAndGet(company, reportInput());
    for (const field of REPORT_FIELDS.filter((f) => f !== 'invoiceItems')) {
      expect(report[field], field).to.be.a('string');
    }
    expect(report).to.include({
      address: '',
      clientEmail: '',
      clientPhone: '',
      agentName: '',
      agentEmail: '',
      agentPhone: '',
      inspectorName: '',
      inspectorEmail: '',
      inspectorNotes: '',
      restId: '',
      publishedUrl: '',
      yearBuilt: '',
      squareFeet: '',
      status: 'new',
      clientName: 'Jordan Smith',
    });
    expect(report.invoiceItems).to.deep.equal([]);
  });

  describe('fromRestService', () => {
    it('defaults to "REST API" when absent', async () => {
      expect((await createAndGet(company, reportInput())).fromRestService).to.equal('REST API');
    });

    it('defaults to "REST API" when blank', async () => {
      expect((await createAndGet(company, reportInput({ fromRestService: '  ' }))).fromRestService).to.equal(
        'REST API',
      );
    });
  });

  describe('string-or-array fields', () => {
    it('treats a string as one value', async () => {
      const report = await createAndGet(
        company,
        reportInput({ clientNames: 'A, B Ltd', clientEmails: 'a@example.com' }),
      );
      expect(report.clientName).to.equal('A, B Ltd');
      expect(report.clientEmail).to.equal('a@example.com');
    });

    it('keeps array order, trims entries and drops blank ones', async () => {
      const report = await createAndGet(
        company,
        reportInput({
          clientNames: ['  Zed ', '', 'Amy', '   '],
          clientPhones: ['', '555'],
          clientEmails: [' b@example.com ', ''],
        }),
      );
      expect(report.clientName).to.equal('Zed, Amy');
      expect(report.clientPhone).to.equal('555');
      expect(report.clientEmail).to.equal('b@example.com');
    });

    it('refuses clientNames that leave no name', async () => {
      for (const clientNames of ['', '   ', '\u3000\n', [], ['', ' '], ['\t']]) {
        const res = await api()
          .post('/reports/new')
          .set('X-API-KEY', company.key)
          .send(reportInput({ clientNames }))
          .expect(400);
        expect(res.body.error).to.equal('clientNames must contain at least one non-blank name');
      }
    });

    it('refuses a value that is neither a string nor an array of strings', async () => {
      for (const clientNames of [1, null, { a: 1 }, [1], true]) {
        const res = await api()
          .post('/reports/new')
          .set('X-API-KEY', company.key)
          .send(reportInput({ clientNames }))
          .expect(400);
        expect(res.body.error).to.match(/^clientNames/);
      }
    });
  });

  describe('inspectionDate', () => {
    it('accepts a real calendar date, leap day included', async () => {
      expect((await createAndGet(company, reportInput({ inspectionDate: '2024-02-29' }))).inspectionDate).to.equal(
        '2024-02-29T00:00:00.000Z',
      );
    });

    it('refuses dates that are not on the calendar or not YYYY-MM-DD', async () => {
      for (const inspectionDate of [
        '2026-02-30',
        '2025-02-29',
        '2026-13-01',
        '2026-3-14',
        '14/03/2026',
        '2026-03-14T00:00:00Z',
        '',
        20260314,
        '0000-01-01',
        '+2026-03-14',
      ]) {
        const res = await api()
          .post('/reports/new')
          .set('X-API-KEY', company.key)
          .send(reportInput({ inspectionDate }))
          .expect(400);
        expect(res.body.error, String(inspectionDate)).to.equal('inspectionDate must be a calendar date YYYY-MM-DD');
      }
    });
  });

  describe('e-mail and phone fields', () => {
    it('refuses a clientEmails entry that is not an e-mail address, naming it', async () => {
      const res = await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send(reportInput({ clientEmails: ['ok@example.com', 'not-an-email'] }))
        .expect(400);
      expect(res.body.error).to.equal('clientEmails[1] must be an e-mail address');
    });

    it('refuses an agentEmail that is not an e-mail address', async () => {
      const res = await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send(reportInput({ agentEmail: 'riley at example' }))
        .expect(400);
      expect(res.body.error).to.equal('agentEmail must be an e-mail address');
    });

    it('keeps phones as free text up to 50 characters', async () => {
      const phone = 'ext. 12 (ask for Pat) ' + '9'.repeat(28);
      expect(await createAndGet(company, reportInput({ clientPhones: phone, agentPhone: 'call after 5' }))).to.include({
        clientPhone: phone,
        agentPhone: 'call after 5',
      });
      const res = await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send(reportInput({ clientPhones: ['1'.repeat(51)] }))
        .expect(400);
      expect(res.body.error).to.match(/^clientPhones\[0\] /);
    });
  });

  describe('inspectorEmails', () => {
    it('matches users case-insensitively, keeps the given order, counts a repeat once, shows stored addresses', async () => {
      const report = await createAndGet(
        company,
        reportInput({
          inspectorEmails: ['DANA@example.COM', 'lee@example.com', 'dana@example.com'],
        }),
      );
      expect(report.inspectorName).to.equal('Dana Inspector, Lee Inspector');
      expect(report.inspectorEmail).to.equal('Dana@Example.com, lee@example.com');
    });

    it('matches an inspector by exactly the address stored, whatever its letters (İ, capital I with dot above)', async () => {
      const own = await newCompany();
      await api()
        .post(`/internal/companies/${own.companyId}/users`)
        .set('Authorization', `Bearer ${APP_TOKEN}`)
        .send({ name: 'İlkay Inspector', email: 'İnspector@example.com' })
        .expect(201);
      const report = await createAndGet(own, reportInput({ inspectorEmails: 'İnspector@example.com' }));
      expect(report.inspectorName).to.equal('İlkay Inspector');
      expect(report.inspectorEmail).to.equal('İnspector@example.com');
    });

    it('lists an unknown address once, as first sent, however its repeats are cased', async () => {
      const res = await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send(reportInput({ inspectorEmails: ['Ghost@Example.com', 'lee@example.com', 'GHOST@example.com'] }))
        .expect(400);
      expect(res.body.error).to.equal('inspectorEmails are not users of this company: Ghost@Example.com');
    });

    it('refuses addresses that are not users of the company, listing them, and stores nothing', async () => {
      const restId = unique('insp');
      const res = await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send(reportInput({ restId, inspectorEmails: ['lee@example.com', 'ghost@example.com', 'nobody@example.com'] }))
        .expect(400);
      expect(res.body.error).to.equal(
        'inspectorEmails are not users of this company: ghost@example.com, nobody@example.com',
      );
      const list = await api().get(`/reports?restId=${restId}`).set('X-API-KEY', company.key).expect(200);
      expect(list.body).to.deep.equal([]);
    });

    it('refuses an inspector of another company', async () => {
      const other = await newCompany([{ name: 'Other', email: 'other-inspector@example.com' }]);
      const res = await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send(reportInput({ inspectorEmails: 'other-inspector@example.com' }))
        .expect(400);
      expect(res.body.error).to.equal('inspectorEmails are not users of this company: other-inspector@example.com');
      expect(other.companyId).to.be.a('string');
    });
  });

  describe('invoiceItems', () => {
    it('accepts the documented shapes and returns them in canonical form', async () => {
      const report = await createAndGet(
        company,
        reportInput({
          invoiceItems: [
            'Radon test: $150',
            'Sewer scope: $1,250.00',
            'Fee: $0',
            'Pool: spa check: $12.5',
            'Big: $1,000,000',
          ],
        }),
      );
      expect(report.invoiceItems).to.deep.equal([
        'Radon test: $150.00',
        'Sewer scope: $1,250.00',
        'Fee: $0.00',
        'Pool: spa check: $12.50',
        'Big: $1,000,000.00',
      ]);
    });

    it('accepts a single string', async () => {
      expect(
        (await createAndGet(company, reportInput({ invoiceItems: 'Radon test: $150' }))).invoiceItems,
      ).to.deep.equal(['Radon test: $150.00']);
    });

    it('refuses items of another shape, naming the item', async () => {
      for (const item of [
        'Radon: $12.345',
        'Radon: $.50',
        '150',
        'Radon $150',
        ': $5',
        '   : $5',
        'Radon: $1,25',
        'Radon: $-5',
      ]) {
        const res = await api()
          .post('/reports/new')
          .set('X-API-KEY', company.key)
          .send(reportInput({ invoiceItems: ['Ok: $1', item] }))
          .expect(400);
        expect(res.body.error, item).to.match(/^invoiceItems\[1\] must have the shape "<Description>: \$<Price>"/);
      }
    });
  });

  describe('restId', () => {
    it('is returned as given', async () => {
      const restId = unique('crm');
      expect((await createAndGet(company, reportInput({ restId }))).restId).to.equal(restId);
    });

    it('refuses "" and more than 255 characters', async () => {
      await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send(reportInput({ restId: '' }))
        .expect(400);
      await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send(reportInput({ restId: 'r'.repeat(256) }))
        .expect(400);
      const ok = await createAndGet(company, reportInput({ restId: unique().padEnd(255, 'r') }));
      expect(ok.restId).to.have.length(255);
    });
  });

  describe('field sizes', () => {
    const cases: [string, unknown][] = [
      ['address', 'a'.repeat(1001)],
      ['notes', 'n'.repeat(100_001)],
      ['yearBuilt', '1'.repeat(21)],
      ['squareFeet', '1'.repeat(21)],
      ['agentName', 'a'.repeat(321)],
      ['fromRestService', 's'.repeat(256)],
      ['clientNames', Array.from({ length: 51 }, (_, i) => `Name ${i}`)],
      ['clientNames', 'n'.repeat(321)],
      ['invoiceItems', Array.from({ length: 201 }, (_, i) => `Item ${i}: $1`)],
      ['inspectorEmails', Array.from({ length: 51 }, (_, i) => `i${i}@example.com`)],
    ];
    for (const [field, value] of cases) {
      it(`refuses ${field} over its limit with 400 naming it`, async () => {
        const res = await api()
          .post('/reports/new')
          .set('X-API-KEY', company.key)
          .send(reportInput({ [field]: value }))
          .expect(400);
        expect(res.body.error).to.match(new RegExp(`^${field}`));
      });
    }

    it('accepts values at their limits', async () => {
      const report = await createAndGet(
        company,
        reportInput({
          address: 'a'.repeat(1000),
          notes: 'n'.repeat(100_000),
          invoiceItems: Array.from({ length: 200 }, (_, i) => `Item ${i}: $1`),
          clientNames: Array.from({ length: 50 }, (_, i) => `Name ${i}`),
        }),
      );
      expect(report.address).to.have.length(1000);
      expect(report.inspectorNotes).to.have.length(100_000);
      expect(report.invoiceItems).to.have.length(200);
    });
  });

  describe('malformed requests', () => {
    it('refuses an unknown field, naming it, so a typo never drops data', async () => {
      const res = await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send(reportInput({ inspectorEmail: 'dana@example.com' }))
        .expect(400);
      expect(res.body).to.deep.equal({ error: 'unknown field: inspectorEmail' });
    });

    it('names each missing required field', async () => {
      const noNames = await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send({ inspectionDate: '2026-03-14' })
        .expect(400);
      expect(noNames.body).to.deep.equal({ error: 'clientNames is required' });
      const noDate = await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send({ clientNames: 'A' })
        .expect(400);
      expect(noDate.body).to.deep.equal({ error: 'inspectionDate is required' });
    });

    it('refuses null for an optional field (no nulls anywhere)', async () => {
      const res = await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send(reportInput({ address: null }))
        .expect(400);
      expect(res.body.error).to.match(/^address /);
    });

    it('refuses the NUL character anywhere, naming the field, instead of failing in the database', async () => {
      for (const [body, field] of [
        [reportInput({ address: 'a\u0000b' }), 'address'],
        [reportInput({ clientNames: ['ok', 'x\u0000'] }), 'clientNames[1]'],
        [reportInput({ restId: '\u0000' }), 'restId'],
      ] as const) {
        const res = await api().post('/reports/new').set('X-API-KEY', company.key).send(body).expect(400);
        expect(res.body).to.deep.equal({ error: `${field} must not contain the NUL character (\\u0000)` });
      }
      const res = await api().get('/reports?restId=%00').set('X-API-KEY', company.key).expect(400);
      expect(res.body.error).to.equal('restId must not contain the NUL character (\\u0000)');
    });

    it('answers 400 for malformed JSON', async () => {
      const res = await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .set('Content-Type', 'application/json')
        .send('{"clientNames": ')
        .expect(400);
      expect(res.body).to.deep.equal({ error: 'the body is not valid JSON' });
    });

    it('answers 400 for a body that is not an object', async () => {
      for (const body of ['[]', '"text"', '42', 'null']) {
        const res = await api()
          .post('/reports/new')
          .set('X-API-KEY', company.key)
          .set('Content-Type', 'application/json')
          .send(body)
          .expect(400);
        expect(res.body.error).to.be.a('string');
      }
    });

    it('answers 415 for a body that is not application/json', async () => {
      const res = await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .set('Content-Type', 'text/plain')
        .send('clientNames=A')
        .expect(415);
      expect(res.body).to.deep.equal({ error: 'unsupported media type: send Content-Type: application/json' });
    });

    it('answers 413 for a body over 1 MiB and stores nothing', async () => {
      const restId = unique('big');
      const res = await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send(reportInput({ restId, notes: 'n'.repeat(1024 * 1024) }))
        .expect(413);
      expect(res.body).to.deep.equal({ error: 'request body is larger than 1 MiB' });
      const list = await api().get(`/reports?restId=${restId}`).set('X-API-KEY', company.key).expect(200);
      expect(list.body).to.deep.equal([]);
    });
  });
});
