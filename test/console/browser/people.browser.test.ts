import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { axeChecks } from '../../support/axe.js';
import {
  expectNothingRan,
  openBrowser,
  publishAndAnswer,
  signInToConsole,
  type BrowserSession,
} from '../../support/browser.js';
import { api, newApp, newCompany, reportInput, unique } from '../../support/harness.js';
import { HttpsReceiver } from '../../support/https-receiver.js';
import { auth } from '../../support/webhooks.js';
import { CONSOLE_VIEWPORT, screenshot } from '../../support/screenshots.js';
import type { Pool } from '../../../src/db/pool.js';

const PASSWORDS = { admin: 'harbor admin passphrase', inspector: 'inspector on the roof 7' };

/** Invites an e-mail with a role on the company's Users page, by keyboard: the link the page shows once. */
async function invite(page: Page, email: string, role: 'admin' | 'inspector'): Promise<string> {
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Role', { exact: true }).selectOption(role);
  await page.getByRole('button', { name: 'Invite' }).press('Enter');
  return (await page.locator('#invitation-link').textContent())!;
}

/** Opens an invitation's link, chooses a name and a password, and presses Enter. */
async function accept(page: Page, link: string, name: string, password: string): Promise<void> {
  await page.goto(link);
  await page.getByLabel('Your name').fill(name);
  await page.getByLabel('Choose a password').fill(password);
  await page.getByLabel('Choose a password').press('Enter');
}

describe('console in a browser (chromium): a company’s own people', () => {
  let receiver: HttpsReceiver;
  let served: { pool: Pool };
  let first: BrowserSession;
  let second: BrowserSession;

  before(async () => {
    receiver = await HttpsReceiver.start();
    const made = newApp({ notifier: receiver.notifier() });
    served = made;
    // Two browsers with profiles of their own: the admin's and the inspector's sessions side by side.
    first = await openBrowser(made.app);
    second = await openBrowser(made.app);
  });
  after(async () => {
    await first?.close();
    await second?.close();
    await receiver?.stop();
    await served?.pool.end();
  });

  it('operator invites an admin, who invites an inspector; the inspector publishes, then is removed', async () => {
    const axe = axeChecks(() => first.page);
    const inspectorAxe = axeChecks(() => second.page);
    const { companyId, key } = await newCompany();
    const hook = `/${unique('people')}`;
    receiver.on(hook, { status: 200, body: 'ok' });
    await api(first.origin)
      .put(`/internal/companies/${companyId}/webhook`)
      .set(auth)
      .send({ url: receiver.url(hook) })
      .expect(200);
    const restId = unique('crm');
    await api(first.origin)
      .post('/reports/new')
      .set('X-API-KEY', key)
      .send(reportInput({ restId, address: '7 Bay Road' }))
      .expect(200);

    // The operator: the company's Users page, "Invite" an admin; the link shown once.
    const { page } = first;
    await signInToConsole(page);
    await page.goto(`/console/companies/${companyId}/users`);
    await axe.check('users (operator)');
    const adminEmail = `${unique('alex')}@example.com`;
    const adminLink = await invite(page, adminEmail, 'admin');
    expect(adminLink).to.match(/\/console\/invitations\/inv_/);
    await axe.check('invitation link shown');
    await page.getByRole('button', { name: 'Sign out' }).click();

    // The admin accepts, lands on the company, invites an inspector.
    await accept(page, adminLink, 'Alex Admin', PASSWORDS.admin);
    await page.waitForURL(`**/console/companies/${companyId}`);
    await page.goto(adminLink);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('No longer valid');
    // The admin's REST API page: a key generated, the live webhook's address saved.
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'REST API' }).click();
    await page.getByRole('button', { name: 'Generate API Key' }).click();
    await page.locator('#new-key').waitFor();
    const adminsKey = (await page.locator('#new-key').textContent())!;
    const live = page.getByRole('region', { name: 'Live webhook' });
    await live.getByLabel('Webhook address').fill(receiver.url(hook));
    await live.getByRole('button', { name: 'Save', exact: true }).click();
    await live.getByText('Status: active').waitFor();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Users' }).click();
    await page.waitForURL('**/users');
    await axe.check('users (admin)');
    const inspectorEmail = `${unique('ina')}@example.com`;
    const inspectorLink = await invite(page, inspectorEmail, 'inspector');

    // The inspector: the invitation page, the inbox with the badge, no REST API (not shown; 403 by URL).
    const inspector = second.page;
    await inspector.goto(inspectorLink);
    await inspectorAxe.check('invitation');
    await accept(inspector, inspectorLink, 'Ina Inspector', PASSWORDS.inspector);
    await inspector.waitForURL(`**/console/companies/${companyId}/reports`);
    await inspector.getByText('New from REST API').first().waitFor();
    await inspectorAxe.check('inbox (inspector)');
    expect(await inspector.getByRole('link', { name: 'REST API' }).count()).to.equal(0);
    expect(await inspector.getByRole('link', { name: 'Users' }).count()).to.equal(0);
    const restApi = await inspector.goto(`/console/companies/${companyId}/integrations/rest-api`);
    expect(restApi!.status()).to.equal(403);
    await inspector.goBack();
    await inspector.getByRole('link', { name: '7 Bay Road' }).click();
    await publishAndAnswer(inspector, 'Publish without notifying', {
      publishedUrl: 'https://reports.example.com/r/people',
      check: inspectorAxe.check,
      byKeyboard: true,
    });
    await inspector.getByText('Published; the integration was not notified').waitFor();
    expect(receiver.at(hook)).to.have.length(0);
    await inspector.getByRole('link', { name: 'Account' }).click();
    await inspectorAxe.check('account');

    // The admin removes the inspector (by keyboard); the inspector's open page is refused at its next click.
    await page.reload();
    const row = page.getByRole('row').filter({ hasText: inspectorEmail });
    await row.getByRole('button', { name: 'Remove' }).press('Enter');
    await page.waitForLoadState();
    expect(await page.getByRole('row').filter({ hasText: inspectorEmail }).textContent()).to.include(
      'No console account',
    );
    await inspector.getByRole('link', { name: 'Reports' }).click();
    await inspector.waitForURL('**/console?next=*');
    await inspector.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    await inspectorAxe.check('sign in again');

    // The admin's audit trail: both people's actions, newest first; filtered to the inspector, their publish.
    await page.setViewportSize(CONSOLE_VIEWPORT);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Audit trail' }).click();
    await page.getByRole('heading', { level: 1, name: 'Audit trail' }).waitFor();
    const rows = async () =>
      (await page.getByRole('table').getByRole('row').allTextContents())
        .slice(1)
        .map((row) => row.replace(/\s+/g, ' '));
    const trail = await rows();
    const at = (who: string, what: string) => trail.findIndex((row) => row.includes(who) && row.includes(what));
    const order = [
      at(adminEmail, 'Person removed'),
      at(inspectorEmail, 'Report published'),
      at(adminEmail, 'Person invited'),
      at(adminEmail, 'Webhook address saved'),
      at(adminEmail, 'API key generated'),
      at('operator', 'Person invited'),
      at('operator', 'Webhook address saved'),
    ];
    expect(trail[at(adminEmail, 'API key generated')]).to.include(adminsKey.slice(0, 'irk_'.length + 8));
    expect(
      order.every((n) => n >= 0) && order.every((n, i) => i === 0 || n > order[i - 1]!),
      trail.join('\n'),
    ).to.equal(true);
    expect(trail[at(inspectorEmail, 'Report published')]).to.include('not notified');
    await axe.check('audit trail');
    await screenshot(page, 'console-audit');
    await page.getByLabel('Who').fill(inspectorEmail);
    await page.getByLabel('Who').press('Enter');
    await page.waitForURL('**/audit?actor=*');
    expect((await rows()).map((row) => row.includes('Report published'))).to.deep.equal([true]);

    expectNothingRan(first);
    expectNothingRan(second);
  });
});
