import { expect } from 'chai';
import { APP_TOKEN, api, newCompany, reportInput, unique, type TestCompany } from '../support/harness.js';

/** The application's inbox: GET /internal/companies/{companyId}/reports and …/reports/{reportId}. */

const auth = { Authorization: `Bearer ${APP_TOKEN}` };
const MISSING_UUID = '00000000-0000-4000-8000-000000000000';

type Listed = { id: string; inspectionDate: string; createdAt: string; status: string; fromRestService: string };

const reportsOf = (companyId: string) => `/internal/companies/${companyId}/reports`;
const list = (companyId: string, query = '') =>
  api()
    .get(`${reportsOf(companyId)}${query}`)
    .set(auth);
const ids = (body: Listed[]) => body.map((r) => r.id);

/** Parses `Link: <…>; rel="next"` into the relative URL, or undefined. */
function nextLink(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^<([^>]+)>; rel="next"$/.exec(header);
  if (!match) throw new Error(`malformed Link header: ${header}`);
  return match[1];
}

/** Every report of a walk that follows the next links from `first`, page by page. */
async function walk(first: string): Promise<{ seen: string[]; pages: number }> {
  const seen: string[] = [];
  let url: string | undefined = first;
  let pages = 0;
  while (url && pages < 50) {
    const res = await api().get(url).set(auth).expect(200);
    seen.push(...ids(res.body as Listed[]));
    url = nextLink(res.headers.link);
    pages++;
  }
  return { seen, pages };
}

async function createInApplication(companyId: string, inspectionDate: string): Promise<string> {
  const res = await api()
    .post(reportsOf(companyId))
    .set(auth)
    .send(reportInput({ inspectionDate, clientNames: unique('client') }))
    .expect(201);
  return res.body.id as string;
}

async function createThroughPartnerApi(company: TestCompany, inspectionDate: string): Promise<string> {
  const res = await api()
    .post('/reports/new')
    .set('X-API-KEY', company.key)
    .send(reportInput({ inspectionDate, restId: unique('crm'), fromRestService: 'Acme CRM' }))
    .expect(200);
  return res.body.id as string;
}

const start = (companyId: string, id: string) =>
  api()
    .post(`${reportsOf(companyId)}/${id}/start`)
    .set(auth)
    .expect(200);

const publish = (companyId: string, id: string) =>
  api()
    .post(`${reportsOf(companyId)}/${id}/publish`)
    .set(auth)
    .send({ publishedUrl: `https://reports.example.com/r/${id}`, notifyIntegration: false })
    .expect(200);

describe('GET /internal/companies/{companyId}/reports', () => {
  let company: TestCompany;
  /** The reports by status: 12 new (4 through the partner API), 5 in progress, 4 published. */
  const byStatus: Record<string, string[]> = { new: [], in_progress: [], published: [] };
  const dates = (n: number, year: number) => Array.from({ length: n }, (_, i) => `${year}-0${1 + (i % 9)}-1${i % 10}`);

  before(async () => {
    company = await newCompany();
    const { companyId } = company;
    for (const date of dates(8, 2026)) byStatus.new!.push(await createInApplication(companyId, date));
    for (const date of dates(4, 2025)) byStatus.new!.push(await createThroughPartnerApi(company, date));
    for (const date of dates(5, 2024)) {
      const id = await createInApplication(companyId, date);
      await start(companyId, id);
      byStatus.in_progress!.push(id);
    }
    for (const date of [...dates(3, 2023), '2026-03-01']) {
      const id = await createThroughPartnerApi(company, date);
      await publish(companyId, id);
      byStatus.published!.push(id);
    }
  });
  const total = () => Object.values(byStatus).flat().length;

  it('answers 20 reports by default, newest inspectionDate first, then creation time, then id', async () => {
    const res = await list(company.companyId).expect(200);
    const reports = res.body as Listed[];
    expect(reports).to.have.length(20);
    for (let i = 1; i < reports.length; i++) {
      const [a, b] = [reports[i - 1]!, reports[i]!];
      const before =
        a.inspectionDate > b.inspectionDate ||
        (a.inspectionDate === b.inspectionDate && (a.createdAt > b.createdAt || a.createdAt === b.createdAt));
      expect(before, `${a.inspectionDate} ${a.createdAt} before ${b.inspectionDate} ${b.createdAt}`).to.equal(true);
    }
    expect(reports[0]!.inspectionDate).to.equal('2026-08-17T00:00:00.000Z');
    expect(nextLink(res.headers.link)).to.match(
      new RegExp(`^/internal/companies/${company.companyId}/reports\\?limit=20&after=[A-Za-z0-9_-]+$`),
    );
    const head = await api().head(reportsOf(company.companyId)).set(auth).expect(200);
    expect(head.headers.link).to.equal(res.headers.link);
  });

  it('walks every report exactly once by following the next links, in the order of one full page', async () => {
    const { seen, pages } = await walk(`${reportsOf(company.companyId)}?limit=4`);
    expect(pages).to.equal(Math.ceil(total() / 4));
    expect(seen).to.have.length(total());
    expect(new Set(seen).size).to.equal(total());
    const all = await list(company.companyId, '?limit=100').expect(200);
    expect(seen).to.deep.equal(ids(all.body));
    expect(all.headers.link).to.equal(undefined);
  });

  it('filters by status, and the next links keep limit and status', async () => {
    for (const [status, expected] of Object.entries(byStatus)) {
      const first = await list(company.companyId, `?limit=2&status=${status}`).expect(200);
      expect(nextLink(first.headers.link)).to.match(new RegExp(`\\?limit=2&after=[A-Za-z0-9_-]+&status=${status}$`));
      const { seen } = await walk(`${reportsOf(company.companyId)}?limit=2&status=${status}`);
      expect(seen, status).to.have.members(expected);
      expect(seen, status).to.have.length(expected.length);
      const all = (await list(company.companyId, `?status=${status}`).expect(200)).body as Listed[];
      expect(ids(all)).to.deep.equal(seen);
      expect(all.every((r) => r.status === status)).to.equal(true);
    }
  });

  it('shows a report created through the partner API as new with its fromRestService (the badge)', async () => {
    const own = await newCompany();
    const fromApi = await createThroughPartnerApi(own, '2026-04-02');
    const fromApplication = await createInApplication(own.companyId, '2026-04-01');
    const res = await list(own.companyId, '?status=new').expect(200);
    expect(res.body.map((r: Listed) => [r.id, r.status, r.fromRestService])).to.deep.equal([
      [fromApi, 'new', 'Acme CRM'],
      [fromApplication, 'new', ''],
    ]);
    await start(own.companyId, fromApi);
    expect(ids((await list(own.companyId, '?status=new').expect(200)).body)).to.deep.equal([fromApplication]);
  });

  it("never lists another company's reports, and answers [] for a company without reports", async () => {
    const other = await newCompany();
    const theirs = await createThroughPartnerApi(other, '2026-04-02');
    const mine = ids((await list(company.companyId, '?limit=100').expect(200)).body);
    expect(mine).not.to.include(theirs);
    expect(ids((await list(other.companyId).expect(200)).body)).to.deep.equal([theirs]);
    const empty = await newCompany();
    const res = await list(empty.companyId).expect(200, []);
    expect(res.headers.link).to.equal(undefined);
  });

  it('refuses a limit that is not an integer from 1 to 100 with 400', async () => {
    for (const limit of ['0', '-1', '101', 'abc', '2.5', '', '1e1', '5.0']) {
      const res = await list(company.companyId, `?limit=${limit}`).expect(400);
      expect(res.body.error, limit).to.match(/^limit /);
    }
    expect((await list(company.companyId, '?limit=1').expect(200)).body).to.have.length(1);
  });

  it('refuses a cursor this service did not write, an unknown status and unknown parameters with 400', async () => {
    const forged = Buffer.from(JSON.stringify(['2026-02-30', '2026-01-01T00:00:00.000000Z', MISSING_UUID]));
    for (const after of ['zzz', '~~~~', forged.toString('base64url')]) {
      const res = await list(company.companyId, `?after=${encodeURIComponent(after)}`).expect(400);
      expect(res.body, after).to.deep.equal({ error: 'after is not a valid cursor' });
    }
    expect((await list(company.companyId, `?after=${'a'.repeat(501)}`).expect(400)).body.error).to.match(/^after /);
    for (const status of ['draft', 'NEW', '', 'new,published']) {
      const res = await list(company.companyId, `?status=${encodeURIComponent(status)}`).expect(400);
      expect(res.body.error, status).to.match(/^status /);
    }
    expect((await list(company.companyId, '?status=draft').expect(400)).body).to.deep.equal({
      error: 'status must be one of new, in_progress, published',
    });
    await list(company.companyId, '?restId=x').expect(400, { error: 'unknown query parameter: restId' });
  });

  it('answers 404 for an unknown or malformed company, and 401 without the token', async () => {
    for (const id of [MISSING_UUID, 'not-a-uuid', "1' OR '1'='1"]) {
      await list(encodeURIComponent(id)).expect(404, { error: `company ${id} not found` });
    }
    await api()
      .get(reportsOf(company.companyId))
      .expect(401, { error: 'missing application token: send Authorization: Bearer <APP_TOKEN>' });
  });
});

describe('GET /internal/companies/{companyId}/reports/{reportId}', () => {
  const read = (companyId: string, id: string) =>
    api()
      .get(`${reportsOf(companyId)}/${id}`)
      .set(auth);

  it('answers the report as listed, a partner-created one new with its fromRestService', async () => {
    const company = await newCompany();
    const id = await createThroughPartnerApi(company, '2026-03-14');
    const res = await read(company.companyId, id).expect(200);
    expect(res.body).to.include({ id, status: 'new', fromRestService: 'Acme CRM' });
    expect((await list(company.companyId).expect(200)).body).to.deep.equal([res.body]);
    await start(company.companyId, id);
    expect((await read(company.companyId, id).expect(200)).body.status).to.equal('in_progress');
  });

  it("answers the same 404 for an unknown, a malformed and another company's report", async () => {
    const mine = await newCompany();
    const theirs = await newCompany();
    const theirId = await createThroughPartnerApi(theirs, '2026-03-14');
    for (const id of [MISSING_UUID, 'not-a-uuid', theirId, "1' OR '1'='1", 'a'.repeat(101)]) {
      const res = await read(mine.companyId, encodeURIComponent(id)).expect(404);
      expect(res.body).to.deep.equal({ error: `report ${id} not found` });
    }
    await read(mine.companyId, '%E0%A4%A').expect(404, { error: 'report %E0%A4%A not found' });
    await read(theirs.companyId, theirId).expect(200);
    await read(MISSING_UUID, theirId).expect(404, { error: `company ${MISSING_UUID} not found` });
  });

  it('refuses unknown query parameters with 400 and a missing token with 401', async () => {
    const company = await newCompany();
    const id = await createInApplication(company.companyId, '2026-03-14');
    await read(company.companyId, `${id}?x=1`).expect(400, { error: 'unknown query parameter: x' });
    await api()
      .get(`${reportsOf(company.companyId)}/${id}`)
      .set('Authorization', 'Bearer nope')
      .expect(401);
  });
});
