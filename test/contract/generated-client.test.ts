import { expect } from 'chai';
import createClient from 'openapi-fetch';
import type { paths } from '../../generated/partner-api.js';
import { newCompany, unique } from '../support/harness.js';
import { startLiveServer, type LiveServer } from './support/live-server.js';

/**
 * What an integrator does: types generated from the published partner document (openapi-typescript,
 * `npm run gen` → generated/partner-api.ts) and the openapi-fetch client, against the live service.
 * The calls type-check only while the document and the client agree (`npm run typecheck`).
 */
describe('a client generated from the partner document', () => {
  let server: LiveServer;

  before(async () => {
    server = await startLiveServer();
  });

  after(async () => {
    await server?.close();
  });

  async function integrator() {
    const inspector = `${unique('dana')}@example.com`;
    const { key } = await newCompany([{ name: 'Dana Inspector', email: inspector }]);
    return { client: createClient<paths>({ baseUrl: server.baseUrl, headers: { 'X-API-KEY': key } }), inspector };
  }

  it('checks the key, creates a report and reads it back', async () => {
    const { client, inspector } = await integrator();
    expect((await client.GET('/auth')).data).to.deep.equal({ result: 'ok' });

    const created = await client.POST('/reports/new', {
      body: {
        clientNames: ['Jordan Smith', 'Casey Smith'],
        inspectionDate: '2026-03-14',
        inspectorEmails: [inspector],
        invoiceItems: ['Home inspection: $450', 'Radon test: $150.00'],
      },
    });
    expect(created.response.status).to.equal(200);
    const id = created.data!.id;

    const { data: report } = await client.GET('/reports/{reportId}', { params: { path: { reportId: id } } });
    expect(report).to.include({
      id,
      clientName: 'Jordan Smith, Casey Smith',
      inspectorEmail: inspector,
      inspectionDate: '2026-03-14T00:00:00.000Z',
      status: 'new',
      fromRestService: 'REST API',
    });
    expect(report!.invoiceItems).to.deep.equal(['Home inspection: $450.00', 'Radon test: $150.00']);
  });

  it('updates the report with the same restId instead of creating another', async () => {
    const { client } = await integrator();
    const restId = unique('crm');
    const first = await client.POST('/reports/new', {
      body: { restId, clientNames: 'Jordan Smith', inspectionDate: '2026-03-14', notes: 'Gate code 4321' },
    });
    const second = await client.POST('/reports/new', {
      body: { restId, clientNames: 'Jordan Smith', inspectionDate: '2026-03-21' },
    });
    expect(second.data!.id).to.equal(first.data!.id);

    const { data: list } = await client.GET('/reports', { params: { query: { restId } } });
    expect(list).to.have.length(1);
    expect(list![0]).to.include({ inspectionDate: '2026-03-21T00:00:00.000Z', inspectorNotes: 'Gate code 4321' });
  });

  it('lists every report once by following the next links', async () => {
    const { client } = await integrator();
    const ids: string[] = [];
    for (const day of ['01', '02', '03', '04', '05']) {
      const { data } = await client.POST('/reports/new', {
        body: { clientNames: 'Jordan Smith', inspectionDate: `2026-04-${day}` },
      });
      ids.push(data!.id);
    }

    const seen: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 10; page++) {
      const { data, response } = await client.GET('/reports', { params: { query: { limit: 2, after } } });
      expect(data!.length).to.be.at.most(2);
      seen.push(...data!.map((r) => r.id));
      const next = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
      if (!next) break;
      after = new URL(next, server.baseUrl).searchParams.get('after') ?? undefined;
    }
    expect(seen).to.deep.equal([...ids].reverse());
  });

  it('gives the errors of the document: bad key, invalid body, unknown report', async () => {
    const { client } = await integrator();

    const badKey = await client.GET('/auth', { headers: { 'X-API-KEY': 'irk_not-a-key' } });
    expect(badKey.response.status).to.equal(400);
    expect(badKey.error).to.deep.equal({ error: 'invalid API key' });

    const invalid = await client.POST('/reports/new', {
      body: { clientNames: 'Jordan Smith', inspectionDate: '2026-02-30' },
    });
    expect(invalid.response.status).to.equal(400);
    expect(invalid.error!.error).to.match(/^inspectionDate /);

    const unknownInspector = await client.POST('/reports/new', {
      body: { clientNames: 'Jordan Smith', inspectionDate: '2026-03-14', inspectorEmails: 'nobody@example.com' },
    });
    expect(unknownInspector.response.status).to.equal(400);
    expect(unknownInspector.error!.error).to.include('nobody@example.com');

    const missing = await client.GET('/reports/{reportId}', {
      params: { path: { reportId: '5b0c6e2e-8f9a-4d55-9d4e-0c1f8e6f2a10' } },
    });
    expect(missing.response.status).to.equal(404);
    expect(missing.error!.error).to.include('not found');

    const badLimit = await client.GET('/reports', { params: { query: { limit: 0 } } });
    expect(badLimit.response.status).to.equal(400);
    expect(badLimit.error).to.deep.equal({ error: 'limit must be an integer from 1 to 100' });
  });
});
