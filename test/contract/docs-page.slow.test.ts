import { expect } from 'chai';
import { launchBrowser, type Browser } from './support/browser.js';
import { startLiveServer, type LiveServer } from './support/live-server.js';
import { operationsOf, partnerDocument } from './support/partner-document.js';

// Slow: a headless Chromium starts and renders the whole Redoc page (partner-document.test.ts checks the page's headers).
describe('GET /docs in headless Chromium', () => {
  let server: LiveServer;
  let browser: Browser;

  before(async function () {
    this.timeout(60_000);
    server = await startLiveServer();
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('renders every partner operation and the webhook in headless Chromium, loading nothing from elsewhere', async function () {
    this.timeout(60_000);
    const page = await browser.context.newPage();
    const foreign: string[] = [];
    const problems: string[] = [];
    page.on('request', (req) => {
      if (!req.url().startsWith(server.baseUrl) && !/^(data|blob):/.test(req.url())) foreign.push(req.url());
    });
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(msg.text());
    });
    page.on('pageerror', (err) => problems.push(err.message));

    await page.goto(`${server.baseUrl}/docs`);
    for (const { operationId, operation } of operationsOf(partnerDocument)) {
      const section = page.locator(`[id="operation/${operationId}"]`);
      await section.waitFor({ timeout: 30_000 });
      expect(await section.locator('h2').first().innerText()).to.equal(operation.summary);
    }
    const webhook = partnerDocument.webhooks?.reportPublished?.post;
    expect(webhook?.summary).to.be.a('string');
    await page.getByRole('heading', { name: webhook!.summary! }).first().waitFor({ timeout: 10_000 });
    // Redoc shows the code samples of each operation as tabs.
    for (const label of ['curl', 'TypeScript (openapi-fetch)', 'Python (requests)']) {
      const tabs = page.locator('[id="operation/listReports"]').getByRole('tab', { name: label });
      expect(await tabs.count(), `code sample tab ${label}`).to.be.above(0);
    }
    // Redoc's endpoint boxes name the server the served document names: the origin the page came from.
    expect(await page.getByText(`${server.baseUrl}/reports/new`).count()).to.be.above(0);
    expect(foreign, 'requests to other origins').to.deep.equal([]);
    expect(problems, 'console errors (CSP violations among them)').to.deep.equal([]);
    await page.close();
  });
});
