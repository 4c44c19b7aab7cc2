import { expect } from 'chai';
import { axeChecks } from '../../support/axe.js';
import {
  browserWithReceiver,
  expectNothingRan,
  PHONE,
  signInToConsole,
  widerThanScreen,
} from '../../support/browser.js';
import { api, newCompany, reportInput } from '../../support/harness.js';
import { auth } from '../../support/webhooks.js';

const HOSTILE_ANSWER = '<img src=x onerror=alert(1)>';

describe('console in a browser (chromium): Settings > Integrations > REST API', () => {
  const suite = browserWithReceiver();
  const { check: accessible, checked } = axeChecks(() => suite.browser.page);

  it('generates and copies a key, saves the address, tests it, redelivers, revokes the integration', async () => {
    const { browser, receiver } = suite;
    const { page } = browser;
    const { companyId } = await newCompany();
    await signInToConsole(page);
    await page.goto(`/console/companies/${companyId}`);
    await page.getByRole('link', { name: 'REST API' }).click();
    await page.getByRole('heading', { level: 1, name: 'REST API' }).waitFor();
    await accessible('rest api');

    // By keyboard: the mode, then Tab to "Generate API Key" and Enter.
    await page.getByRole('radio', { name: 'Test (sandbox)' }).check();
    await page.getByRole('radio', { name: 'Live' }).focus();
    await page.keyboard.press('Space');
    await page.getByRole('radio', { name: 'Live' }).press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).to.equal('Generate API Key');
    await page.keyboard.press('Enter');
    await page.locator('#new-key').waitFor();
    const key = (await page.locator('#new-key').textContent())!;
    expect(key).to.match(/^irk_/);
    expect(page.url()).to.not.include(key);
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).to.equal(key);
    await accessible('new key');
    await api().get('/auth').set('X-API-KEY', key).expect(200);

    // The live webhook: a refusal at the field, then the receiver's address.
    const live = page.getByRole('region', { name: 'Live webhook' });
    await live.getByLabel('Webhook address').fill('http://example.com/hook');
    await live.getByRole('button', { name: 'Save', exact: true }).click();
    expect(await live.getByLabel('Webhook address').getAttribute('aria-invalid')).to.equal('true');
    await accessible('address refused');
    const hook = `/browser-${companyId}`;
    receiver.on(hook, { status: 200, body: HOSTILE_ANSWER });
    await live.getByLabel('Webhook address').fill(receiver.url(hook));
    await live.getByRole('button', { name: 'Save', exact: true }).click();
    await live.getByText('Status: active').waitFor();
    // The event types by keyboard: Space on report.started, Tab on to Save, Enter.
    const started = live.getByRole('checkbox', { name: /^report\.started/ });
    expect(await started.isChecked()).to.equal(false);
    await started.focus();
    await page.keyboard.press('Space');
    await live.getByLabel('Webhook address').fill(receiver.url(hook));
    await live.getByRole('button', { name: 'Save', exact: true }).focus();
    await page.keyboard.press('Enter');
    await live.getByText('Status: active').waitFor();
    const { body: integration } = await api().get(`/internal/companies/${companyId}/integration`).set(auth).expect(200);
    expect(integration.eventTypes).to.deep.equal(['report.published', 'report.started']);
    expect(await live.getByRole('checkbox', { name: /^report\.started/ }).isChecked()).to.equal(true);
    await accessible('event types saved');
    // On a phone's width (390 px) nothing of the page is wider than the screen, the event types included.
    await page.setViewportSize(PHONE);
    expect(await widerThanScreen(page), 'wider than 390 px').to.deep.equal([]);
    await live.getByRole('checkbox', { name: /^report\.started/ }).scrollIntoViewIfNeeded();
    await accessible('rest api at 390 px');
    await page.setViewportSize({ width: 1280, height: 720 });
    // With script, the outcome is swapped into its status region: the page itself stays (htmx).
    await page.evaluate(() => document.body.setAttribute('data-page-kept', ''));
    await live.getByRole('button', { name: 'Send test delivery' }).click();
    await live.getByRole('status').getByText('Test delivery sent (status 200)').waitFor();
    expect(await page.locator('body[data-page-kept]').count(), 'the page was not loaded again').to.equal(1);
    expect(receiver.at(hook)).to.have.length(1);
    expect(await live.locator('pre').textContent()).to.equal(HOSTILE_ANSWER);
    await accessible('test delivery sent');

    await live.getByRole('button', { name: 'Reveal secret' }).click();
    const secret = (await live.locator('#live-webhook-secret').textContent())!;
    expect(secret).to.match(/^whsec_/);
    expect(page.url()).to.not.include('whsec_');
    await accessible('secret revealed');

    // A failing receiver: its error on the page; a published report's event to redeliver.
    receiver.on(hook, { status: 500, body: 'down' });
    await page.evaluate(() => document.body.setAttribute('data-page-kept', ''));
    await live.getByRole('button', { name: 'Send test delivery' }).click();
    await live
      .getByText('Test delivery failed (status 502): webhook delivery failed: the receiver answered HTTP 500')
      .waitFor();
    expect(await page.locator('body[data-page-kept]').count(), 'a refusal is swapped in too').to.equal(1);
    await accessible('test delivery failed');
    const { body: report } = await api().post('/reports/new').set('X-API-KEY', key).send(reportInput()).expect(200);
    const published = await api(browser.origin)
      .post(`/internal/companies/${companyId}/reports/${report.id}/publish`)
      .set(auth)
      .send({ publishedUrl: 'https://reports.example.com/r/1', notifyIntegration: true, whenDeliveryFails: 'retry' })
      .expect(200);
    const eventId = published.body.webhook.eventId as string;
    await page.reload();
    const deliveries = page.getByRole('region', { name: 'Recent deliveries' });
    await deliveries.getByRole('row').filter({ hasText: eventId }).getByRole('button', { name: 'Redeliver' }).click();
    await page.getByText(`Event ${eventId} queued for redelivery.`).waitFor();
    await accessible('redelivered');

    // Revoke through the confirmation page: the key is refused after.
    await page.getByRole('link', { name: 'Revoke REST API Integration' }).click();
    await page.getByText('webhook addresses and their signing secrets').waitFor();
    await accessible('revoke confirmation');
    await page.getByRole('button', { name: 'Revoke REST API Integration' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'REST API' }).waitFor();
    expect(await page.getByText('No API keys.').count()).to.equal(1);
    await api().get('/auth').set('X-API-KEY', key).expect(400, { error: 'invalid API key' });

    expectNothingRan(browser);
    expect(checked).to.have.length(10);
  });
});
