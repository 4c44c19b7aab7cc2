import { expect } from 'chai';
import { newCompany, pool } from '../support/harness.js';
import { consoleClient, signIn } from '../support/console.js';

// The REST API page's recent deliveries page both ways and say whether more lie beyond the page.

describe('console: the recent deliveries, a page at a time', () => {
  it('pages to older deliveries and back to newer ones, saying when more follow', async () => {
    const { companyId } = await newCompany();
    // 105 attempts, one a second apart, newest last (the log keeps attempts whose report is gone).
    await pool().query(
      `INSERT INTO webhook_deliveries (company_id, report_id, webhook_id, url, attempted_at, duration_ms, http_status)
       SELECT $1, gen_random_uuid(), 'msg_page' || n, 'https://hooks.example.com/a', now() - (200 - n) * interval '1 second', 5, 204
         FROM generate_series(1, 105) AS n`,
      [companyId],
    );
    const { cookie } = await signIn();
    const page = `/console/companies/${companyId}/integrations/rest-api`;
    const get = async (url: string) => (await consoleClient().get(url).set('Cookie', cookie).expect(200)).text;
    const webhookIds = (text: string) => [...text.matchAll(/msg_page(\d+)/g)].map((m) => Number(m[1]));

    const first = await get(page);
    expect(new Set(webhookIds(first)).size).to.equal(100);
    expect(Math.max(...webhookIds(first))).to.equal(105);
    expect(first).to.include('More deliveries than this page').and.not.include('Newer deliveries');
    const older = /href="([^"]*\?older=[0-9a-f-]{36})#deliveries-heading"/.exec(first)![1]!;
    const second = await get(older);
    expect([...new Set(webhookIds(second))].sort((a, b) => a - b)).to.deep.equal([1, 2, 3, 4, 5]);
    expect(second).not.to.include('Older deliveries');
    const newer = /href="([^"]*\?newer=[0-9a-f-]{36})#deliveries-heading"/.exec(second)![1]!;
    expect(new Set(webhookIds(await get(newer)))).to.deep.equal(new Set(webhookIds(first)));
    // A cursor that is no delivery of the company is the first page.
    expect(new Set(webhookIds(await get(`${page}?older=not-an-id`)))).to.deep.equal(new Set(webhookIds(first)));
  });
});
