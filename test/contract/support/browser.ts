import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { CHROMIUM, CHROMIUM_FLAGS } from '../../support/browser.js';

/**
 * The Chromium that arrives with `npm ci` (@sparticuz/chromium unpacks its build to the temp
 * directory), else Debian's chromium package. Either way no browser is downloaded at test time.
 */
async function chromiumExecutables(): Promise<string[]> {
  const found: string[] = [];
  try {
    const { default: packaged } = await import('@sparticuz/chromium');
    found.push(await packaged.executablePath());
  } catch {
    // Not unpackable on this platform: fall back to the system browser below.
  }
  if (existsSync(CHROMIUM)) found.push(CHROMIUM);
  return found;
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile, driven by playwright-core. */
export async function launchBrowser(): Promise<Browser> {
  const executables = await chromiumExecutables();
  if (executables.length === 0) {
    throw new Error(
      'no Chromium found: run `npm ci` (it installs @sparticuz/chromium) or `apt-get install -y chromium`',
    );
  }
  const failures: string[] = [];
  for (const executablePath of executables) {
    const profile = await mkdtemp(path.join(os.tmpdir(), 'intake-chromium-'));
    try {
      const context = await chromium.launchPersistentContext(profile, {
        executablePath,
        headless: true,
        args: CHROMIUM_FLAGS,
      });
      return {
        context,
        close: async () => {
          await context.close();
          await rm(profile, { recursive: true, force: true });
        },
      };
    } catch (err) {
      await rm(profile, { recursive: true, force: true });
      failures.push(`${executablePath}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  throw new Error(
    `Chromium did not start (install Debian's with \`apt-get install -y chromium\`):\n${failures.join('\n')}`,
  );
}
