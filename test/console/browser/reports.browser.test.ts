import { expect } from 'chai';
import type { Pool } from '../../../src/db/pool.js';
import { seriousViolations } from '../../support/axe.js';
import { openBrowser, type BrowserSession } from '../../support/browser.js';
import { api, APP_TOKEN, newApp, reportInput, unique } from '../../support/harness.js';
import { HttpsReceiver } from '../../support/https-receiver.js';
import { companyWithWebhook, verifies, type CompanyWithWebhook } from '../../support/webhooks.js';

const PUBLISHED_AT = 'https://reports.example.com/r/1';

describe('console in a browser (chromium): the reports inbox and publishing', () => {
  let browser: BrowserSession;
  let receiver: HttpsReceiver;
  let ownPool: Pool;
  let company: CompanyWithWebhook;
  const checked: string[] = [];

  before(async () => {
    receiver = await HttpsReceiver.start();
    // The app's notifier may reach the local receiver, as the harness's webhook suites allow it.
    const allowed = newApp({ notifier: receiver.notifier() });
    ownPool = allowed.pool;
    browser = await openBrowser(allowed.app);
    company = await companyWithWebhook(receiver);
    const { page } = browser;
    await page.goto('/console');
    await page.getByLabel('Application token').fill(APP_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/console/companies');
  });
  after(async () => {
    await browser?.close();
    await receiver?.stop();
    await ownPool?.end();
  });

  /** axe on the page the browser shows: no serious or critical violation. */
  async function accessible(what: string) {
    expect(await seriousViolations(browser.page), what).to.deep.equal([]);
    checked.push(what);
  }

  /** A report created through the partner API with the company's key. */
  async function partnerReport(fields: Record<string, unknown>): Promise<string> {
    const res = await api().post('/reports/new').set('X-API-KEY', company.key).send(reportInput(fields)).expect(200);
    return res.body.id as string;
  }

  const inbox = () => `/console/companies/${company.companyId}/reports`;

  /** Publishes the report shown with the address, and answers the question. */
  async function publishAndAnswer(answer: 'Notify' | 'Publish without notifying') {
    const { page } = browser;
    await page.getByLabel('Published address').fill(PUBLISHED_AT);
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await page.getByRole('group', { name: 'Notify the integration?' }).waitFor();
    await accessible(`question before ${answer}`);
    await page.getByRole('button', { name: answer, exact: true }).click();
  }

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

    await publishAndAnswer('Notify');
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
    await publishAndAnswer('Notify');
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

    expect(browser.dialogs, 'dialogs').to.deep.equal([]);
    expect(browser.foreignRequests, 'requests to another host').to.deep.equal([]);
    expect(browser.consoleErrors, 'errors in the browser console').to.deep.equal([]);
    expect(browser.failedAssets, 'assets that failed to load').to.deep.equal([]);
    expect(checked).to.have.length(9);
  });
});
