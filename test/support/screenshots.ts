import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { Page } from 'playwright-core';

const DOCS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs');

/** The README's screenshots are taken at this size: the console's pages fit it without a scroll bar's worth of detail. */
export const CONSOLE_VIEWPORT = { width: 1000, height: 700 };

/** A PNG the README shows stays small in the repository. */
const MAX_BYTES = 100_000;

/**
 * The page as the README shows it, `docs/<name>.png`. Taken on every run, so that the step stays working
 * and small; written to docs/ only when SCREENSHOTS=1 (npm run screenshots).
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const png = await page.screenshot({ type: 'png' });
  expect(png.length, `${name}.png in bytes`).to.be.below(MAX_BYTES);
  if (process.env.SCREENSHOTS === '1') await writeFile(path.join(DOCS, `${name}.png`), png);
}
