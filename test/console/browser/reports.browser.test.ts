import { expect } from 'chai';
import { axeChecks } from '../../support/axe.js';
import {
  browserWithReceiver,
  expectNothingRan,
  publishAndAnswer,
  signInToConsole,
  type BrowserSession,
} from '../../support/browser.js';
import { api, reportInput, unique } from '../../support/harness.js';
import type { HttpsReceiver } from '../../support/https-receiver.js';
import { companyWithWebhook, verifies, type CompanyWithWebhook } from '../../support/webhooks.js';

const PUBLISHED_AT = 'https://reports.example.com/r/1';

describe('console in a browser (chromium): the reports inbox and publishing', () => {
  const suite = browserWithReceiver();
  let browser: BrowserSession;
  let receiver: HttpsReceiver;
  let company: CompanyWithWebhook;
  const { check: accessible, checked } = axeChecks(() => browser.page);

  before(async () => {
    ({ browser, receiver } = suite);
    company = await companyWithWebhook(receiver);
    await signInToConsole(browser.page);
  });

  /** A report created through the partner API with the company's key. */
  async function partnerReport(fields: Record<string, unknown>): Promise<string> {
    const res = await api().post('/reports/new').set('X-API-KEY', company.key).send(reportInput(fields)).expect(200);
    return res.body.id as string;
  }

  const inbox = () => `/console/companies/${company.companyId}/reports`;

  /** Publishes the report shown with the address, and answers the question. */
  const publishWith = (answer: 'Notify' | 'Publish without notifying') =>
    publishAndAnswer(browser.page, answer, { publishedUrl: PUBLISHED_AT, check: accessible });

  it('shows an API report with the badge; Start, Publish, "Notify": the receiver verifies the signed webhook', async () => {
    const { page } = browser;
    const restId = unique('crm');
    const address = `${unique('12 Elm St')}`;
    const id = await partnerReport({ restId, address, inspectionDate: '2031-05-01' });
    await page.goto(inbox());
    const row = page.getByRole('row').filter({ hasText: restId });
    expect(await row.getByText('New from REST API').count()).to.equal(1);
    await accessible('inbox');

    // By keyboard: the report's link, then "Start".
    await page.getByRole('link', { name: address }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(`**/reports/${id}`);
    await accessible('report');
    await page.getByRole('button', { name: 'Start' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('Started.').waitFor();
    expect(await page.getByText('New from REST API').count()).to.equal(0);

    await publishWith('Notify');
    await page.getByRole('status').getByText('outcome sent').waitFor();
    await accessible('published');
    const [webhook] = receiver.at(company.path);
    expect(verifies(webhook!, company.secret)).to.equal(true);
    expect(JSON.parse(webhook!.body)).to.include({ id, publishedUrl: PUBLISHED_AT });
  });

  it('a failing receiver: the error, "Retry" (still failing), then "Skip notification" publishes', async () => {
    const { page } = browser;
    receiver.on(company.path, { status: 500 });
    const before = receiver.at(company.path).length;
    const id = await partnerReport({ restId: unique('crm'), inspectionDate: '2031-05-02' });
    await page.goto(`${inbox()}/${id}`);
    await publishWith('Notify');
    const error = page.getByRole('alert').getByText('webhook delivery failed: the receiver answered HTTP 500');
    await error.waitFor();
    await accessible('notification failed');
    await Promise.all([
      page.waitForResponse((res) => res.request().method() === 'POST'),
      page.getByRole('button', { name: 'Retry', exact: true }).click(),
    ]);
    await error.waitFor();
    expect(receiver.at(company.path).length).to.equal(before + 2);
    await page.getByRole('button', { name: 'Skip notification' }).click();
    await page.getByRole('status').getByText('the integration was not notified').waitFor();
    await accessible('skipped');
    expect(receiver.at(company.path).length).to.equal(before + 2);
  });

  it('renders hostile values as text on the inbox and the report’s page: no dialog, no foreign request', async () => {
    const { page } = browser;
    const script = '<script>alert(1)</script>';
    const img = '"><img src=x onerror=alert(1)>';
    const id = await partnerReport({
      restId: `${script}${unique('x')}`,
      address: `javascript:alert(1)${img}`,
      clientNames: script,
      agentName: 'javascript:alert(1)',
      fromRestService: img,
      notes: `${'x'.repeat(100_000 - script.length)}${script}`,
      inspectionDate: '2031-05-03',
    });
    await page.goto(inbox());
    expect(await page.getByRole('link', { name: `javascript:alert(1)${img}` }).count()).to.equal(1);
    expect(await page.getByRole('cell', { name: script, exact: true }).count()).to.be.greaterThan(0);
    await accessible('hostile inbox');
    await page.goto(`${inbox()}/${id}`);
    const notes = await page.locator('dd').filter({ hasText: 'xxxx' }).textContent();
    expect(notes).to.have.length(100_000);
    expect(notes!.endsWith(script)).to.equal(true);
    expect(await page.getByText(img, { exact: true }).count()).to.equal(1);
    await accessible('hostile report');

    expectNothingRan(browser);
    expect(checked).to.have.length(9);
  });
});
