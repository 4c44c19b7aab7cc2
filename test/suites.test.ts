import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface MochaConfig {
  spec?: string[];
  ignore?: string[];
  require?: string[];
}

const config = (file: string): MochaConfig => JSON.parse(readFileSync(path.join(ROOT, file), 'utf8')) as MochaConfig;
const unit = config('test/mocharc.unit.json');
const main = config('test/mocharc.main.json');
const slow = config('test/mocharc.slow.json');
const pgbouncer = config('test/pgbouncer/mocharc.json');
const bench = config('test/bench/mocharc.json');
const browser = config('test/console/browser/mocharc.json');
const stock = config('test/stock/mocharc.json');

const testFiles = (readdirSync(path.join(ROOT, 'test'), { recursive: true }) as string[])
  .filter((name) => name.endsWith('.test.ts'))
  .map((name) => path.posix.join('test', name.split(path.sep).join('/')))
  .sort();

/**
 * npm test runs test/mocharc.main.json (every test file but the slow ones, the benchmark's, PgBouncer's and
 * the stock check's), npm run test:slow the slow ones — named *.slow.test.ts, found by a glob, so no list is
 * kept —, test:bench and test:pgbouncer their folders; test:stock runs the main, slow and PgBouncer suites
 * again on Debian's PostgreSQL, then test/stock's check (.ci/run calls them all); npm run test:unit those
 * that need no PostgreSQL (npm test runs them too), listed by hand: a unit test that reaches for the
 * database fails here.
 */
describe('test suites (the mocha configurations)', () => {
  it('leaves out of npm test only the slow files, which npm run test:slow runs, and the folders run apart', () => {
    expect(main.spec).to.deep.equal(['test/**/*.test.ts']);
    expect(slow.spec).to.deep.equal(['test/**/*.slow.test.ts']);
    expect(pgbouncer.spec).to.deep.equal(['test/pgbouncer/**/*.test.ts']);
    expect(bench.spec).to.deep.equal(['test/bench/**/*.test.ts']);
    expect(browser.spec).to.deep.equal(['test/console/browser/**/*.browser.test.ts']);
    expect(stock.spec).to.deep.equal(['test/stock/**/*.test.ts']);
    expect(main.ignore).to.deep.equal([
      'test/pgbouncer/**',
      'test/failover/**',
      'test/bench/**',
      'test/stock/**',
      'test/**/*.slow.test.ts',
      'test/**/*.browser.test.ts',
    ]);
    const ci = readFileSync(path.join(ROOT, '.ci/run'), 'utf8').split('\n');
    const runs = [
      'npm run check',
      'npm test',
      'npm run test:slow',
      'npm run test:bench',
      'npm run test:browser',
      'npm run test:pgbouncer',
      'npm run test:failover',
      'npm run test:stock',
    ];
    for (const run of runs) {
      expect(ci, `.ci/run: ${run}`).to.include(run);
    }
  });

  it('names in the unit list only existing test files, each once, none of them slow', () => {
    for (const file of unit.spec!) expect(testFiles, file).to.include(file);
    for (const file of unit.spec!)
      expect(file, `${file} is a unit test: npm test runs it`).not.to.match(/\.slow\.test\.ts$/);
    expect(new Set(unit.spec).size).to.equal(unit.spec!.length);
  });

  it('mirrors src/ in its folders: every folder of tests is a part of the code, the contract or a suite of its own', () => {
    const folders = new Set(testFiles.map((file) => file.split('/')[1]!).filter((name) => !name.endsWith('.ts')));
    expect([...folders].sort()).to.deep.equal(
      [
        'audit',
        'bench',
        'contract',
        'console',
        'core',
        'db',
        'failover',
        'integrations',
        'local',
        'operations',
        'pgbouncer',
        'platform',
        'reports',
        'stock',
      ].sort(),
    );
  });

  it('runs the unit tests without the harness (no PostgreSQL), on files that import no test support nor pg', () => {
    expect(unit.require).to.deep.equal(['test/support/no-database.ts']);
    for (const file of unit.spec!) {
      const imports = [
        ...readFileSync(path.join(ROOT, file), 'utf8').matchAll(/from '([^']+)'|import\('([^']+)'\)/g),
      ].map((match) => match[1] ?? match[2]);
      for (const imported of imports) {
        expect(imported, `${file} imports ${imported}`).not.to.match(
          /\/support\/|^pg$|\/db\/(pool|migrate)\b|\/local\/(?!ports-and-pids\.)/,
        );
      }
    }
  });
});
