import { expect } from 'chai';
import { axeChecks } from '../../support/axe.js';
import { browserWithReceiver, expectNothingRan, publishAndAnswer, signInToConsole } from '../../support/browser.js';
import { api, unique } from '../../support/harness.js';
import { CONSOLE_VIEWPORT, screenshot } from '../../support/screenshots.js';
import { verifies } from '../../support/webhooks.js';

const PUBLISHED_AT = 'https://reports.example.com/r/48213';
const FIRST = {
  restId: 'crm-48213',
  address: '12 Elm Street, Springfield',
  clientNames: 'Jordan Smith',
  inspectionDate: '2026-03-14',
};
const SECOND = {
  ...FIRST,
  restId: 'crm-48214',
  address: '40 Oak Avenue, Springfield',
  clientNames: 'Casey Lee',
  inspectionDate: '2026-03-21',
};

/**
 * The whole story of the console as a person walks it, in one browser session against one served app:
 * every step by accessible name, the sign-in and some actions by keyboard, axe on every state, and
 * nothing run or loaded that should not be. Its pages are the README's screenshots (npm run screenshots).
 */
describe('console in a browser (chromium): the whole story', () => {
  const suite = browserWithReceiver();
  before(() => suite.browser.page.setViewportSize(CONSOLE_VIEWPORT));

  it('signs in, sets up a company and its integration, publishes with and without a notification, revokes', async () => {
    const { browser, receiver } = suite;
    const { page } = browser;
    const axe = axeChecks(() => page);
    const partner = () => api(browser.origin);

    // Sign in by keyboard; a company, created by Enter in its field; an inspector.
    await signInToConsole(page);
    await axe.check('companies');
    const companyName = 'Harbor Home Inspections';
    await page.getByLabel('Name').fill(companyName);
    await page.getByLabel('Name').press('Enter');
    await page.getByRole('heading', { level: 1, name: companyName }).waitFor();
    await axe.check('company');
    const email = 'dana@example.com';
    await page.getByLabel('Name').fill('Dana Inspector');
    await page.getByLabel('E-mail').fill(email);
    await page.getByRole('button', { name: 'Add inspector' }).click();
    await page
      .getByRole('listitem')
      .filter({ hasText: `Dana Inspector (${email})` })
      .waitFor();
    await axe.check('company with an inspector');

    // REST API: a key generated and copied, read back from the clipboard.
    await page.getByRole('link', { name: 'REST API', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'REST API' }).waitFor();
    await axe.check('rest api');
    await page.getByRole('button', { name: 'Generate API Key' }).click();
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    const key = await page.evaluate(() => navigator.clipboard.readText());
    expect(key).to.match(/^irk_/);
    expect(await page.locator('#new-key').textContent()).to.equal(key);
    await axe.check('new key');
    await screenshot(page, 'console-rest-api');

    // The live webhook on the local receiver; its secret; a test delivery that arrives.
    const live = page.getByRole('region', { name: 'Live webhook' });
    const hook = `/${unique('story')}`;
    receiver.on(hook, { status: 200, body: 'ok' });
    await live.getByLabel('Webhook address').fill(receiver.url(hook));
    await live.getByRole('button', { name: 'Save', exact: true }).click();
    await live.getByRole('button', { name: 'Reveal secret' }).click();
    const secret = (await live.locator('#live-webhook-secret').textContent())!;
    expect(secret).to.match(/^whsec_/);
    await axe.check('secret revealed');
    await live.getByRole('button', { name: 'Send test delivery' }).click();
    await live.getByText('Test delivery sent (status 200)').waitFor();
    expect(receiver.at(hook)).to.have.length(1);
    expect(verifies(receiver.at(hook)[0]!, secret)).to.equal(true);
    await axe.check('test delivery sent');

    // A report through the partner API with the copied key, for the inspector: in the inbox with the badge.
    const created = async (fields: typeof FIRST) =>
      (
        await partner()
          .post('/reports/new')
          .set('X-API-KEY', key)
          .send({ ...fields, inspectorEmails: email })
          .expect(200)
      ).body.id as string;
    const first = await created(FIRST);
    await page.getByRole('link', { name: companyName }).click();
    await page.getByRole('link', { name: 'Reports', exact: true }).click();
    const rowOf = (fields: typeof FIRST) => page.getByRole('row').filter({ hasText: fields.restId });
    expect(await rowOf(FIRST).getByText('New from REST API').count()).to.equal(1);
    await axe.check('inbox');

    // Opened, published, "Notify" by keyboard: the receiver verifies the signed webhook.
    await rowOf(FIRST).getByRole('link', { name: FIRST.address }).click();
    await page.waitForURL(`**/reports/${first}`);
    expect(await page.getByText('Dana Inspector', { exact: true }).count()).to.equal(1);
    await axe.check('report');
    await publishAndAnswer(page, 'Notify', { publishedUrl: PUBLISHED_AT, check: axe.check, byKeyboard: true });
    await page.getByRole('status').getByText('outcome sent').waitFor();
    await axe.check('published');
    const webhook = receiver.at(hook)[1]!;
    expect(verifies(webhook, secret)).to.equal(true);
    expect(JSON.parse(webhook.body)).to.include({ id: first, publishedUrl: PUBLISHED_AT });

    // A failing receiver: the error, "Retry" (fails again), then "Skip notification" publishes without one.
    receiver.on(hook, { status: 500, body: 'down' });
    const second = await created(SECOND);
    await page.getByRole('link', { name: 'Reports', exact: true }).click();
    expect(await rowOf(SECOND).getByText('New from REST API').count()).to.equal(1);
    expect(await rowOf(FIRST).getByText('New from REST API').count()).to.equal(0);
    expect(await rowOf(FIRST).getByRole('cell', { name: 'Published' }).count()).to.equal(1);
    await axe.check('inbox after publishing');
    await screenshot(page, 'console-inbox');
    await rowOf(SECOND).getByRole('link', { name: SECOND.address }).click();
    await page.waitForURL(`**/reports/${second}`);
    await publishAndAnswer(page, 'Notify', { publishedUrl: PUBLISHED_AT, check: axe.check });
    const error = page.getByRole('alert').getByText('webhook delivery failed: the receiver answered HTTP 500');
    await error.waitFor();
    await axe.check('notification failed');
    await Promise.all([
      page.waitForResponse((res) => res.request().method() === 'POST'),
      page.getByRole('button', { name: 'Retry', exact: true }).click(),
    ]);
    await error.waitFor();
    expect(receiver.at(hook)).to.have.length(4);
    await axe.check('retry failed');
    await page.getByRole('button', { name: 'Skip notification' }).click();
    await page.getByRole('status').getByText('the integration was not notified').waitFor();
    await axe.check('skipped');
    expect(receiver.at(hook)).to.have.length(4);
    expect((await partner().get(`/reports/${second}`).set('X-API-KEY', key).expect(200)).body.status).to.equal(
      'published',
    );

    // "Revoke REST API Integration" through its confirmation: the copied key is refused.
    await page.getByRole('link', { name: 'Reports', exact: true }).click();
    await page.getByRole('link', { name: companyName }).click();
    await page.getByRole('link', { name: 'REST API', exact: true }).click();
    await page.getByRole('link', { name: 'Revoke REST API Integration' }).click();
    await page.getByText('webhook addresses and their signing secrets').waitFor();
    await axe.check('revoke confirmation');
    await page.getByRole('button', { name: 'Revoke REST API Integration' }).click();
    await page.getByRole('heading', { level: 1, name: 'REST API' }).waitFor();
    expect(await page.getByText('No API keys.').count()).to.equal(1);
    await axe.check('revoked');
    await partner().get('/auth').set('X-API-KEY', key).expect(400, { error: 'invalid API key' });

    expect(receiver.contractErrors.map((e) => e.message)).to.deep.equal([]);
    expectNothingRan(browser);
    expect(axe.checked).to.have.length(18);
  });
});
