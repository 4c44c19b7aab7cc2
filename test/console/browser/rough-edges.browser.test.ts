import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { axeChecks } from '../../support/axe.js';
import {
  browserWithReceiver,
  expectNothingRan,
  PHONE,
  publishAndAnswer,
  signInToConsole,
  widerThanScreen,
} from '../../support/browser.js';
import { api, pool, reportInput, unique } from '../../support/harness.js';
import { auth, companyWithWebhook } from '../../support/webhooks.js';

const PUBLISHED_AT = 'https://reports.example.com/r/edges';

/** The element that has the keyboard's focus: its id, and whether it is in view. */
const focus = (page: Page) =>
  page.evaluate(() => {
    const element = document.activeElement!;
    const { top, bottom } = element.getBoundingClientRect();
    return { id: element.id, text: element.textContent ?? '', inView: top >= 0 && bottom <= window.innerHeight };
  });

/** The POSTs the page sends while `act` runs. */
async function postsDuring(page: Page, act: () => Promise<unknown>): Promise<string[]> {
  const posts: string[] = [];
  const seen = (request: { method(): string; url(): string }) => {
    if (request.method() === 'POST') posts.push(request.url());
  };
  page.on('request', seen);
  try {
    await act();
  } finally {
    page.off('request', seen);
  }
  return posts;
}

describe('console in a browser (chromium): redirects, focus, confirmations, times, paging, 390 px', () => {
  const suite = browserWithReceiver();
  const { check: accessible, checked } = axeChecks(() => suite.browser.page);
  before(() => signInToConsole(suite.browser.page));

  it('after Publish, the question then the outcome are focused and in view; reload and Back send nothing', async () => {
    const { page } = suite.browser;
    const company = await companyWithWebhook(suite.receiver);
    // A long report: the question is below the fold unless the page brings it into view.
    const { body } = await api()
      .post('/reports/new')
      .set('X-API-KEY', company.key)
      .send(reportInput({ notes: 'A long note.\n'.repeat(200) }))
      .expect(200);
    await page.goto(`/console/companies/${company.companyId}/reports/${body.id}`);
    await page.getByLabel('Published address').fill(PUBLISHED_AT);
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await page.getByRole('group', { name: 'Notify the integration?' }).waitFor();
    expect(await focus(page)).to.include({ id: 'publish-step', inView: true });
    await accessible('question focused');
    // The question was shown once: a reload shows the report again and sends nothing.
    expect(await postsDuring(page, () => page.reload())).to.deep.equal([]);
    expect(await page.getByRole('group', { name: 'Notify the integration?' }).count()).to.equal(0);

    await publishAndAnswer(page, 'Publish without notifying', { publishedUrl: PUBLISHED_AT, check: accessible });
    await page.getByRole('status').getByText('the integration was not notified').waitFor();
    expect(await focus(page)).to.include({ id: 'outcome', inView: true });
    const posts = await postsDuring(page, async () => {
      await page.reload();
      await page.goBack();
      await page.goForward();
    });
    expect(posts, 'no form sent again').to.deep.equal([]);
    expect(await page.getByRole('status').getByText('not notified').count()).to.equal(0);
    expect(suite.receiver.at(company.path)).to.have.length(0);
    expectNothingRan(suite.browser);
  });

  it('a new key is shown once, a reload makes none; Revoke and Rotate secret ask first, by keyboard, and say what happened', async () => {
    const { page } = suite.browser;
    const company = await companyWithWebhook(suite.receiver);
    const page_ = `/console/companies/${company.companyId}/integrations/rest-api`;
    const keys = async () =>
      (await pool().query('SELECT 1 FROM api_keys WHERE company_id = $1', [company.companyId])).rowCount;
    await page.goto(page_);
    await page.getByRole('button', { name: 'Generate API Key' }).click();
    const key = (await page.locator('#new-key').textContent())!;
    expect(page.url()).to.not.include(key);
    expect(await keys()).to.equal(2);
    expect(await postsDuring(page, () => page.reload())).to.deep.equal([]);
    expect(await page.locator('#new-key').count()).to.equal(0);
    expect(await keys()).to.equal(2);

    // Times: UTC to the second on hover, the viewer's zone shown, no milliseconds anywhere.
    const created = page.locator('time').first();
    expect(await created.getAttribute('title')).to.match(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
    expect(await created.getAttribute('datetime')).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const shown = await page.evaluate(() => {
      const time = document.querySelector('time')!;
      return {
        text: time.textContent,
        local: new Date(time.dateTime).toLocaleDateString(undefined, { dateStyle: 'medium' }),
      };
    });
    expect(shown.text).to.include(shown.local);
    expect(await page.locator('main').textContent()).to.not.match(/\d{2}:\d{2}:\d{2}\.\d{3}/);

    // "Revoke" by keyboard: its link, the confirmation page, its button.
    const prefix = key.slice(0, 12);
    await page.getByRole('link', { name: `Revoke key ${prefix}…` }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: `Revoke key ${prefix}…?` }).waitFor();
    await accessible('revoke key confirmation');
    await api().get('/auth').set('X-API-KEY', key).expect(200);
    await page.getByRole('button', { name: 'Revoke' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText(`Key ${prefix}… was revoked`).waitFor();
    expect(await focus(page)).to.include({ id: 'outcome' });
    await api().get('/auth').set('X-API-KEY', key).expect(400);

    const live = page.getByRole('region', { name: 'Live webhook' });
    await live.getByRole('link', { name: 'Rotate secret' }).click();
    await page.getByRole('heading', { level: 1, name: 'Rotate the live webhook signing secret?' }).waitFor();
    await accessible('rotate confirmation');
    await page.getByRole('link', { name: 'Cancel' }).click();
    await live.getByRole('link', { name: 'Rotate secret' }).click();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('status').getByText('The live webhook signing secret was rotated').waitFor();
    await accessible('secret rotated');
    const { body } = await api().get(`/internal/companies/${company.companyId}/integration`).set(auth).expect(200);
    expect(body.previousSecretExpiresAt).to.be.a('string');
    expectNothingRan(suite.browser);
  });

  it('the inbox: filters and pages by keyboard, a way back; every page fits 390 px, tables scroll in their box', async () => {
    const { page } = suite.browser;
    const inspector = { name: 'Robin Filter', email: `${unique('robin')}@example.com` };
    const company = await companyWithWebhook(suite.receiver);
    await api().post(`/internal/companies/${company.companyId}/users`).set(auth).send(inspector).expect(201);
    for (let i = 0; i < 22; i++)
      await api()
        .post('/reports/new')
        .set('X-API-KEY', company.key)
        .send(
          reportInput({
            address: `${i} Averyveryverylongstreetnamewithoutanyspaces Boulevard`,
            inspectorEmails: i === 0 ? inspector.email : [],
            inspectionDate: `2027-01-${String(i + 1).padStart(2, '0')}`,
          }),
        )
        .expect(200);
    const inbox = `/console/companies/${company.companyId}/reports`;
    await page.goto(inbox);
    await page.getByText('More reports follow on older pages.').waitFor();
    await page.getByRole('link', { name: 'Older reports' }).focus();
    await page.keyboard.press('Enter');
    await page.getByText('These are the oldest reports.').waitFor();
    await page.getByRole('link', { name: 'Newer reports' }).click();
    await page.getByText('More reports follow on older pages.').waitFor();

    await page.getByLabel('Inspector').focus();
    await page.getByLabel('Inspector').selectOption(inspector.email);
    await page.getByRole('button', { name: 'Filter' }).press('Enter');
    await page.waitForURL(/inspector=/);
    expect(await page.getByRole('row').count()).to.equal(2); // the header and the one report
    await accessible('inbox filtered');

    const pages = [
      '/console/companies',
      `/console/companies/${company.companyId}`,
      `/console/companies/${company.companyId}/integrations/rest-api`,
      `/console/companies/${company.companyId}/integrations/rest-api/revoke`,
      `/console/companies/${company.companyId}/integrations/rest-api/webhook/secret/rotate`,
      inbox,
      `${inbox}?status=new`,
    ];
    await page.setViewportSize(PHONE);
    try {
      for (const path of pages) {
        await page.goto(path);
        expect(await widerThanScreen(page), `${path} at 390 px`).to.deep.equal([]);
        await accessible(`${path} at 390 px`);
      }
      // A table word is never broken mid-word: the inbox's table scrolls in its box instead.
      await page.goto(inbox);
      const table = await page
        .locator('.table-scroll')
        .first()
        .evaluate((box) => ({
          scrolls: box.scrollWidth > box.clientWidth,
          wrap: getComputedStyle(box.querySelector('td')!).overflowWrap,
        }));
      expect(table).to.deep.equal({ scrolls: true, wrap: 'normal' });
      await page.goto(`${inbox}?inspector=${encodeURIComponent(inspector.email)}`);
      await page.getByRole('link', { name: /^0 Averyvery/ }).click();
      expect(await widerThanScreen(page), 'report at 390 px').to.deep.equal([]);
      await accessible('report at 390 px');
      await page.getByRole('link', { name: 'Reports' }).click();
      await page.getByRole('link', { name: 'Companies', exact: true }).first().waitFor();
    } finally {
      await page.setViewportSize({ width: 1280, height: 720 });
    }
    expectNothingRan(suite.browser);
    expect(checked.length).to.be.greaterThan(10);
  });
});
