import { expect } from 'chai';
import { axeChecks } from '../../support/axe.js';
import { expectNothingRan, openBrowser, type BrowserSession } from '../../support/browser.js';
import { app, APP_TOKEN, unique } from '../../support/harness.js';

const HOSTILE = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>'];

describe('console in a browser (chromium): sign in, a company, its inspectors', () => {
  let browser: BrowserSession;
  const { check: accessible, checked } = axeChecks(() => browser.page);

  before(async () => {
    browser = await openBrowser(app());
  });
  after(async () => {
    await browser?.close();
  });

  it('walks the story by keyboard-reachable controls, every page accessible, hostile names inert', async () => {
    const { page } = browser;
    await page.goto('/console');
    await accessible('sign in');

    await page.getByLabel('Application token').fill('not the token');
    await page.getByRole('button', { name: 'Sign in with the token' }).click();
    await page.getByText('This is not the application token.').waitFor();
    await accessible('sign in refused');
    expect(await page.getByLabel('Application token').getAttribute('aria-invalid')).to.equal('true');

    await page.getByLabel('Application token').fill(APP_TOKEN);
    await page.getByLabel('Application token').press('Enter');
    await page.waitForURL('**/console/companies');
    await accessible('companies');

    const company = `${unique('browser')} ${HOSTILE[0]}`;
    await page.getByLabel('Name').fill(company);
    await page.getByRole('button', { name: 'Create company' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/companies\/[0-9a-f-]{36}$/);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal(company);
    await accessible('company');

    const email = `${unique('dana')}@example.com`;
    for (const name of HOSTILE) {
      await page.getByLabel('Name').fill(name);
      await page.getByLabel('E-mail').fill(name === HOSTILE[0] ? email : `x${email}`);
      await page.getByRole('button', { name: 'Add inspector' }).press('Enter');
      await page.waitForLoadState();
      expect(await page.getByText(name, { exact: false }).count(), name).to.be.greaterThan(0);
    }

    // A second inspector with the e-mail: the API's message at the field.
    await page.getByLabel('Name').fill('Another');
    await page.getByLabel('E-mail').fill(email);
    await page.getByRole('button', { name: 'Add inspector' }).click();
    const field = page.getByLabel('E-mail');
    expect(await field.getAttribute('aria-invalid')).to.equal('true');
    const described = await field.getAttribute('aria-describedby');
    expect(await page.locator(`#${described}`).textContent()).to.equal(
      `the company already has a user with e-mail ${email}`,
    );
    await accessible('inspector refused');

    await page.getByRole('link', { name: 'Companies' }).click();
    await page.waitForURL('**/console/companies');
    expect(await page.getByRole('link', { name: company }).count()).to.equal(1);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/console');
    expect(await page.getByRole('button', { name: 'Sign in', exact: true }).count()).to.equal(1);
    await page.goto('/console/companies');
    expect(new URL(page.url()).pathname).to.equal('/console');
    expect(new URL(page.url()).searchParams.get('next')).to.equal('/console/companies');

    expectNothingRan(browser);
    expect(checked).to.have.length(5);
  });
});
