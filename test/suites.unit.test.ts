import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface MochaConfig {
  spec?: string[];
  ignore?: string[];
  extension?: string[];
  require?: string[];
}

/** mocha's own lookup of a configuration's files (spec, ignore, extension), so this test sees what a run sees. */
const collectFiles = createRequire(import.meta.url)('mocha/lib/cli/collect-files.cjs') as (options: {
  spec: string[];
  ignore: string[];
  extension: string[];
  file: string[];
  recursive: boolean;
  sort: boolean;
  allowEmpty: boolean;
}) => { files: string[] };

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const posix = (name: string) => name.split(path.sep).join('/');
const testTree = (readdirSync(path.join(ROOT, 'test'), { recursive: true }) as string[]).map(
  (name) => `test/${posix(name)}`,
);
const testFiles = testTree.filter((name) => name.endsWith('.test.ts')).sort();

/** Every suite is a mocha configuration under test/ (test/mocharc.*.json, or a folder's mocharc.json). */
const suites = testTree
  .filter((name) => /(^|\/)mocharc(\.[\w-]+)?\.json$/.test(name))
  .map((file) => ({ file, config: JSON.parse(read(file)) as MochaConfig }));

function filesOf({ spec = [], ignore = [], extension = ['js'] }: MochaConfig): string[] {
  const { files } = collectFiles({ spec, ignore, extension, file: [], recursive: false, sort: true, allowEmpty: true });
  return files.map((file) => posix(path.relative(ROOT, file)));
}

/** What CI runs: .ci/run's lines, the npm scripts they call (each within its budget), and the files those scripts run with tsx. */
function ranByCi(): string {
  const ci = read('.ci/run');
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
  const called = [...ci.matchAll(/^step \S+ npm (?:run ([\w:-]+)|(test))$/gm)].map(
    (match) => scripts[match[1] ?? match[2]!]!,
  );
  const files = called.flatMap((command) =>
    [...command.matchAll(/\btsx (\S+\.ts)\b/g)].map((match) => read(match[1]!)),
  );
  return [ci, ...called, ...files].join('\n');
}

/**
 * The suites are found by their globs, never listed by hand: a unit test is named *.unit.test.ts (npm
 * test runs them first, without PostgreSQL), a slow one *.slow.test.ts, a browser one *.browser.test.ts;
 * test/bench, test/pgbouncer, test/failover and test/stock hold suites of their own. .ci/run reaches
 * every suite, through the npm scripts it calls.
 */
describe('test suites (the mocha configurations)', () => {
  it('runs every test file in exactly one suite', () => {
    const runs = new Map<string, string[]>(testFiles.map((file) => [file, []]));
    for (const { file, config } of suites) {
      for (const found of filesOf(config)) runs.get(found)?.push(file);
    }
    for (const [file, suitesOfFile] of runs) expect(suitesOfFile, `${file} is run by`).to.have.lengthOf(1);
  });

  it('runs every suite from .ci/run', () => {
    const ci = ranByCi();
    for (const { file } of suites) expect(ci, `.ci/run runs ${file}`).to.include(file);
    expect(ci, '.ci/run runs the gates').to.include('npm run check');
  });

  it('mirrors src/ in its folders: every folder of tests is a part of src/, a suite of its own or told of in docs/testing.md', () => {
    const parts = new Set(readdirSync(path.join(ROOT, 'src'), { withFileTypes: true }).map((entry) => entry.name));
    const ownSuites = new Set(suites.map(({ file }) => file.split('/').slice(0, -1).join('/')));
    const told = read('docs/testing.md');
    const folders = new Set(
      testFiles.map((file) => file.split('/').slice(0, 2).join('/')).filter((f) => !f.endsWith('.ts')),
    );
    for (const folder of folders) {
      const name = folder.split('/')[1]!;
      expect(parts.has(name) || ownSuites.has(folder) || told.includes(`\`${folder}\``), folder).to.equal(true);
    }
  });

  // pg itself may be imported, to fake its connections: no-database.ts refuses every real one at once.
  it('runs the unit tests without the harness (no PostgreSQL), on files that import no database support, pool nor migrations', () => {
    const unit = suites.find(({ file }) => file === 'test/mocharc.unit.json')!.config;
    expect(unit.require).to.deep.equal(['test/support/no-database.ts']);
    const files = filesOf(unit);
    expect(files).to.include('test/suites.unit.test.ts');
    for (const file of files) {
      const imports = [...read(file).matchAll(/from '([^']+)'|import\('([^']+)'\)/g)].map(
        (match) => match[1] ?? match[2],
      );
      for (const imported of imports) {
        expect(imported, `${file} imports ${imported}`).not.to.match(
          /\/support\/(?!wait\.js)|\/db\/(pool|migrate)\b|\/local\/(?!ports-and-pids\.)/,
        );
      }
    }
  });
});
