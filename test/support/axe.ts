import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeResults {
  violations: { id: string; impact?: string | null; help: string; nodes: { target: unknown }[] }[];
}

/**
 * Runs axe-core on the page and returns its serious and critical violations ("<rule>: <help> at <targets>").
 * axe is added as a script through the DevTools protocol, which the page's CSP does not govern.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const results = (await page.evaluate('axe.run(document)')) as AxeResults;
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} at ${JSON.stringify(v.nodes.map((n) => n.target))}`);
}

/**
 * A walk's accessibility checks: `check(what)` runs axe on the page the browser shows and expects no
 * serious or critical violation; `checked` names the states checked, so that a test can count them.
 */
export function axeChecks(page: () => Page): { check: (what: string) => Promise<void>; checked: string[] } {
  const checked: string[] = [];
  const check = async (what: string) => {
    expect(await seriousViolations(page()), what).to.deep.equal([]);
    checked.push(what);
  };
  return { check, checked };
}
