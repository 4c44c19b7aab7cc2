import { mkdtemp, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Express } from 'express';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { Pool } from '../../src/db/pool.js';
import { APP_TOKEN, newApp } from './harness.js';
import { HttpsReceiver } from './https-receiver.js';

/** Debian's chromium package: never a downloaded browser. */
export const CHROMIUM = '/usr/bin/chromium';

/** Chromium as root on a machine with no network but loopback: nothing to sandbox, nothing to fetch. */
export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface BrowserSession {
  page: Page;
  /** The server's origin (http://127.0.0.1:<port>). */
  origin: string;
  /** Every dialog a page opened (alert, confirm, prompt): a hostile value that ran would open one. */
  dialogs: string[];
  /** Every request to a host other than 127.0.0.1: a hostile value that loaded something would make one. */
  foreignRequests: string[];
  /** The browser console's errors (a CSP violation among them), but for a status of a page's own answer. */
  consoleErrors: string[];
  /** Every script, style or image that failed to load ("<status> <url>"); a page itself may answer 4xx or 5xx. */
  failedAssets: string[];
  close(): Promise<void>;
}

/** The app served on 127.0.0.1, and chromium with a new empty profile on a page bound to it. */
export async function openBrowser(app: Express): Promise<BrowserSession> {
  const server: Server = createServer(app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const profile = await mkdtemp(path.join(tmpdir(), 'console-browser-'));
  let context: BrowserContext | undefined;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: ['--headless', ...CHROMIUM_FLAGS],
      headless: true,
      baseURL: origin,
    });
  } catch (err) {
    server.close();
    await rm(profile, { recursive: true, force: true });
    throw err;
  }
  const session: BrowserSession = {
    page: context.pages()[0] ?? (await context.newPage()),
    origin,
    dialogs: [],
    foreignRequests: [],
    consoleErrors: [],
    failedAssets: [],
    close: async () => {
      await context.close();
      server.closeAllConnections();
      server.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
  context.on('request', (request) => {
    const url = new URL(request.url());
    if (url.protocol !== 'data:' && url.hostname !== '127.0.0.1') session.foreignRequests.push(request.url());
  });
  session.page.on('dialog', (dialog) => {
    session.dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  context.on('response', (response) => {
    // A page may answer 4xx or 5xx, whether loaded whole or fetched by htmx for the part it swaps in.
    if (response.status() >= 400 && !['document', 'xhr', 'fetch'].includes(response.request().resourceType()))
      session.failedAssets.push(`${response.status()} ${response.url()}`);
  });
  session.page.on('console', (message) => {
    // The browser reports each 4xx answer as an error: a page's own refusal (401, 409) is no fault.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      session.consoleErrors.push(message.text());
  });
  return session;
}

/** The text of the element that has the keyboard's focus. */
const focused = (page: Page) => page.evaluate(() => document.activeElement?.textContent);

/** Signs in at /console by keyboard: the application token typed in its field, Tab to "Sign in with the token", Enter. */
export async function signInToConsole(page: Page): Promise<void> {
  await page.goto('/console');
  await page.getByLabel('Application token').focus();
  await page.keyboard.type(APP_TOKEN);
  await page.keyboard.press('Tab');
  expect(await focused(page)).to.equal('Sign in with the token');
  await page.keyboard.press('Enter');
  await page.waitForURL('**/console/companies');
}

/**
 * On a report's page: "Publish" with the published address, then the answer to "Notify the
 * integration?" (the question checked by `check` first), by keyboard when asked.
 */
export async function publishAndAnswer(
  page: Page,
  answer: 'Notify' | 'Publish without notifying',
  { publishedUrl, check, byKeyboard = false }: PublishOptions,
): Promise<void> {
  await page.getByLabel('Published address').fill(publishedUrl);
  await page.getByRole('button', { name: 'Publish', exact: true }).click();
  await page.getByRole('group', { name: 'Notify the integration?' }).waitFor();
  await check(`question before ${answer}`);
  const button = page.getByRole('button', { name: answer, exact: true });
  if (!byKeyboard) return button.click();
  await button.focus();
  expect(await focused(page)).to.contain(answer);
  await page.keyboard.press('Enter');
}

interface PublishOptions {
  publishedUrl: string;
  check: (what: string) => Promise<void>;
  byKeyboard?: boolean;
}

/** Nothing ran or loaded that should not have: no dialog, no foreign request, no console error, no failed asset. */
export function expectNothingRan(session: BrowserSession): void {
  expect(session.dialogs, 'dialogs').to.deep.equal([]);
  expect(session.foreignRequests, 'requests to another host').to.deep.equal([]);
  expect(session.consoleErrors, 'errors in the browser console').to.deep.equal([]);
  expect(session.failedAssets, 'assets that failed to load').to.deep.equal([]);
}

export interface ReceiverSuite {
  browser: BrowserSession;
  receiver: HttpsReceiver;
}

/**
 * Hooks of a suite whose pages deliver webhooks: a local HTTPS receiver, an app that may reach it and
 * trusts its certificate (as WEBHOOK_ALLOWED_CIDRS would), served to chromium, the clipboard allowed;
 * started before the suite and stopped after it. Read the fields inside hooks and tests.
 */
export function browserWithReceiver(): ReceiverSuite {
  const suite = {} as ReceiverSuite;
  let served: { pool: Pool } | undefined;
  before(async () => {
    suite.receiver = await HttpsReceiver.start();
    const made = newApp({ notifier: suite.receiver.notifier() });
    served = made;
    suite.browser = await openBrowser(made.app);
    const permissions = ['clipboard-read', 'clipboard-write'];
    await suite.browser.page.context().grantPermissions(permissions, { origin: suite.browser.origin });
  });
  after(async () => {
    await suite.browser?.close();
    await suite.receiver?.stop();
    await served?.pool.end();
  });
  return suite;
}

/** A phone's screen (an iPhone 12 to 15): the console is read there too. */
export const PHONE = { width: 390, height: 844 };

/**
 * The elements of the page's main wider than the screen (tag.class each); a table that scrolls inside
 * its own box (.table-scroll) counts as that box, which must fit.
 */
export function widerThanScreen(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('main *')]
      .filter((e) => !e.parentElement?.closest('.table-scroll'))
      .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
      .map((e) => `${e.tagName.toLowerCase()}.${e.className}`),
  );
}
