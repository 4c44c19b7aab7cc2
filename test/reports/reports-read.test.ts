import { expect } from 'chai';
import { api, newCompany, reportInput, unique, type TestCompany } from '../support/harness.js';

type Listed = { id: string; inspectionDate: string; createdAt: string; clientName: string; restId: string };

/** Parses `Link: </reports?...>; rel="next"` into the relative URL, or undefined. */
function nextLink(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^<([^>]+)>; rel="next"$/.exec(header);
  if (!match) throw new Error(`malformed Link header: ${header}`);
  return match[1];
}

async function createMany(company: TestCompany, dates: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, inspectionDate] of dates.entries()) {
    const res = await api()
      .post('/reports/new')
      .set('X-API-KEY', company.key)
      .send(reportInput({ inspectionDate, clientNames: `Client ${i}`, restId: unique('list') }))
      .expect(200);
    ids.push(res.body.id);
  }
  return ids;
}

describe('GET /reports', () => {
  let company: TestCompany;
  const dates = ['2026-01-05', '2026-03-01', '2025-12-31', '2026-03-01', '2026-02-14', '2026-03-01', '2024-02-29'];
  before(async () => {
    company = await newCompany();
    await createMany(company, [...dates, ...Array.from({ length: 18 }, (_, i) => `2023-0${1 + (i % 9)}-1${i % 10}`)]);
  });
  const list = (query = '', key = company.key) => api().get(`/reports${query}`).set('X-API-KEY', key);

  it('answers 20 reports by default, newest inspectionDate first, ties by creation time then id, newest first', async () => {
    const res = await list().expect(200);
    const reports = res.body as Listed[];
    expect(reports).to.have.length(20);
    for (let i = 1; i < reports.length; i++) {
      const [a, b] = [reports[i - 1]!, reports[i]!];
      const key = (r: Listed) => [r.inspectionDate, r.createdAt, r.id];
      expect(
        key(a) > key(b) || (a.inspectionDate === b.inspectionDate ? a.createdAt >= b.createdAt : false),
        `${JSON.stringify(key(a))} before ${JSON.stringify(key(b))}`,
      ).to.equal(true);
    }
    expect(reports.slice(0, 3).map((r) => r.clientName)).to.deep.equal(['Client 5', 'Client 3', 'Client 1']);
    expect(reports[3]!.inspectionDate).to.equal('2026-02-14T00:00:00.000Z');
  });

  it('answers at most limit reports, with a Link to the next page that keeps limit', async () => {
    const res = await list('?limit=3').expect(200);
    expect(res.body).to.have.length(3);
    const next = nextLink(res.headers.link);
    expect(next).to.match(/^\/reports\?limit=3&after=[A-Za-z0-9_-]+$/);
  });

  it('walks every report exactly once by following the next links, with no link on the last page', async () => {
    const seen: string[] = [];
    let url: string | undefined = '/reports?limit=4';
    let pages = 0;
    while (url && pages < 20) {
      const res = await list(url.replace('/reports', '')).expect(200);
      seen.push(...(res.body as Listed[]).map((r) => r.id));
      url = nextLink(res.headers.link);
      pages++;
    }
    expect(pages).to.equal(7); // 25 reports in pages of 4
    expect(seen).to.have.length(25);
    expect(new Set(seen).size).to.equal(25);
    const all = (await list('?limit=100').expect(200)).body as Listed[];
    expect(seen).to.deep.equal(all.map((r) => r.id));
    expect((await list('?limit=100').expect(200)).headers.link).to.equal(undefined);
  });

  it('gives no next link when the page is exactly the last reports', async () => {
    const res = await list('?limit=25').expect(200);
    expect(res.body).to.have.length(25);
    expect(res.headers.link).to.equal(undefined);
  });

  it('accepts limit 1 and 100', async () => {
    expect((await list('?limit=1').expect(200)).body).to.have.length(1);
    expect((await list('?limit=100').expect(200)).body).to.have.length(25);
  });

  it('refuses a limit that is not an integer from 1 to 100', async () => {
    for (const limit of ['0', '-1', '101', 'abc', '2.5', '', '1e2']) {
      const res = await list(`?limit=${limit}`).expect(400);
      expect(res.body.error, limit).to.match(/^limit /);
    }
  });

  it('refuses unknown query parameters, naming them', async () => {
    const res = await list('?limt=5').expect(400);
    expect(res.body).to.deep.equal({ error: 'unknown query parameter: limt' });
  });

  it('refuses every after cursor PostgreSQL could not take, or that this service did not write, with 400', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const at = '2026-01-01T00:00:00.000000Z';
    const cursor = (...parts: unknown[]) => Buffer.from(JSON.stringify(parts)).toString('base64url');
    const valid = cursor('2026-01-01', at, id);
    await list(`?after=${valid}`).expect(200);
    for (const after of [
      'zzz',
      '~~~~',
      cursor('2026-01-01', 'x', 'y'),
      Buffer.from('{"a":1}').toString('base64url'),
      cursor('0000-01-01', at, id), // PostgreSQL has no year 0
      cursor('2026-01-01', '0000-01-01T00:00:00.000000Z', id),
      cursor('10000-01-01', at, id),
      cursor('294277-01-01', at, id),
      cursor('2026-01-01', '294277-01-01T00:00:00.000000Z', id),
      cursor('2026-02-30', at, id),
      cursor('2025-02-29', at, id),
      cursor('2026-13-01', at, id),
      cursor('2026-02-01', '2026-01-01T25:00:00.000000Z', id),
      cursor('2026-02-01', '2026-01-01T23:60:00.000000Z', id),
      cursor('2026-02-01', '2026-01-31T23:59:60.000000Z', id),
      cursor('2026-02-01', '2026-04-31T00:00:00.000000Z', id),
      cursor(1e308, at, id),
      cursor('2026-01-01', at, 'ffffffff-ffff-ffff-ffff-fffffffffffff'),
      cursor('2026-01-01', at, id, 'extra'),
      cursor('9'.repeat(200), at, id),
      cursor(2 ** 53 + 1, at, id),
      `${valid}~`, // base64 decoding would skip the stray character
      `${valid}A`,
    ]) {
      const res = await list(`?after=${encodeURIComponent(after)}`).expect(400);
      expect(res.body, after).to.deep.equal({ error: 'after is not a valid cursor' });
    }
    expect((await list(`?after=${'a'.repeat(501)}`).expect(400)).body.error).to.match(/^after /);
  });

  it('takes cursors at the edges of the years a report can have', async () => {
    const cursor = (date: string, at: string) =>
      Buffer.from(JSON.stringify([date, at, '00000000-0000-4000-8000-000000000000'])).toString('base64url');
    for (const after of [
      cursor('0001-01-01', '0001-01-01T00:00:00.000000Z'),
      cursor('9999-12-31', '9999-12-31T23:59:59.999999Z'),
      cursor('2024-02-29', '2000-02-29T12:00:00.000000Z'),
    ]) {
      await list(`?after=${after}`).expect(200);
    }
  });

  it('filters by restId: exactly that report, or none', async () => {
    const restId = unique('filter');
    const created = await api()
      .post('/reports/new')
      .set('X-API-KEY', company.key)
      .send(reportInput({ restId, inspectionDate: '2020-01-01' }))
      .expect(200);
    try {
      const res = await list(`?restId=${encodeURIComponent(restId)}`).expect(200);
      expect(res.body.map((r: Listed) => r.id)).to.deep.equal([created.body.id]);
      expect(res.headers.link).to.equal(undefined);
      expect((await list('?restId=no-such-rest-id').expect(200)).body).to.deep.equal([]);
    } finally {
      // The report stays; later tests count 25 + this one, so keep the walk test independent of order.
    }
  });

  it('filters by a restId holding space, +, &, #, %, /, quotes or non-ASCII, however the query is encoded', async () => {
    const own = await newCompany();
    const restIds = ['crm 42', 'crm+42', 'a&b=c', 'x#y?z', '100%', 'a/b:c', "o'neil (2)*!", 'Zoë — 東京 🏠'];
    const ids = new Map<string, string>();
    for (const restId of restIds) {
      const res = await api().post('/reports/new').set('X-API-KEY', own.key).send(reportInput({ restId })).expect(200);
      ids.set(restId, res.body.id);
    }
    const encodings = {
      // What URLSearchParams, and so this service's own Link, send: a space as +.
      form: (restId: string) => new URLSearchParams({ restId }).toString(),
      // What encodeURIComponent sends: a space as %20, and ' ( ) * ! unencoded.
      percent: (restId: string) => `restId=${encodeURIComponent(restId)}`,
    };
    for (const restId of restIds) {
      for (const [name, encode] of Object.entries(encodings)) {
        const res = await list(`?${encode(restId)}`, own.key).expect(200);
        expect(
          res.body.map((r: Listed) => r.restId),
          `${name}: ${encode(restId)}`,
        ).to.deep.equal([restId]);
        expect(res.body[0].id).to.equal(ids.get(restId));
      }
    }
    // Sent as typed: + is a space, and / and : need no encoding in a query.
    expect((await list('?restId=crm+42', own.key).expect(200)).body[0].id).to.equal(ids.get('crm 42'));
    expect((await list('?restId=a/b:c', own.key).expect(200)).body[0].id).to.equal(ids.get('a/b:c'));
  });

  it("returns only the key's own company reports, both ways", async () => {
    const a = await newCompany();
    const b = await newCompany();
    const [aId] = await createMany(a, ['2026-05-05']);
    const [bId] = await createMany(b, ['2026-05-05']);
    expect((await list('', a.key).expect(200)).body.map((r: Listed) => r.id)).to.deep.equal([aId]);
    expect((await list('', b.key).expect(200)).body.map((r: Listed) => r.id)).to.deep.equal([bId]);
  });

  it('answers [] for a company without reports', async () => {
    const empty = await newCompany();
    const res = await list('', empty.key).expect(200);
    expect(res.body).to.deep.equal([]);
    expect(res.headers.link).to.equal(undefined);
  });
});

describe('GET /reports/{reportId}', () => {
  it('answers the report', async () => {
    const company = await newCompany();
    const [id] = await createMany(company, ['2026-03-14']);
    const res = await api().get(`/reports/${id}`).set('X-API-KEY', company.key).expect(200);
    expect(res.body).to.include({ id, inspectionDate: '2026-03-14T00:00:00.000Z', clientName: 'Client 0' });
  });

  it("answers the same 404 for an unknown, a malformed and another company's id", async () => {
    const mine = await newCompany();
    const theirs = await newCompany();
    const [theirId] = await createMany(theirs, ['2026-03-14']);
    const unknownId = '00000000-0000-4000-8000-000000000000';
    const long = 'a'.repeat(101);
    for (const id of [
      unknownId,
      'not-a-uuid',
      theirId!,
      "1' OR '1'='1",
      'ZZZZZZZZ-0000-4000-8000-000000000000',
      long,
    ]) {
      const res = await api()
        .get(`/reports/${encodeURIComponent(id)}`)
        .set('X-API-KEY', mine.key)
        .expect(404);
      expect(res.body).to.deep.equal({ error: `report ${id} not found` });
    }
    await api().get(`/reports/${theirId}`).set('X-API-KEY', theirs.key).expect(200);
    // A broken percent-escape is a malformed id too.
    await api().get('/reports/%E0%A4%A').set('X-API-KEY', mine.key).expect(404, { error: 'report %E0%A4%A not found' });
  });

  it('requires a key', async () => {
    const company = await newCompany();
    const [id] = await createMany(company, ['2026-03-14']);
    await api().get(`/reports/${id}`).expect(400, { error: 'missing X-API-KEY header' });
  });
});
