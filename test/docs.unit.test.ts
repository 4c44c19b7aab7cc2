import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The README is what a newcomer reads in five minutes: what the service is, the two commands, a curl
 * walk-through, the layout and where to go next. Everything else is a short page of docs/, which the
 * README links; a rule kept by hand would give way to the next section someone adds.
 */
const README_MAX_LINES = 200;

const pages = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const textOf = (page: string) => readFileSync(path.join(ROOT, page), 'utf8');
/** Markdown outside fenced code: a `# …` line in a sh block is a comment, not a heading. */
const prose = (page: string) => textOf(page).replace(/^```[\s\S]*?^```/gm, '');

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, each space a `-`. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
const anchorsOf = (page: string) => new Set([...prose(page).matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1]!)));

/** Every relative link of a page, as [the file it names from the repository's root, the anchor]. */
function linksOf(page: string): [string, string | undefined][] {
  return [...prose(page).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z]+:/.test(target))
    .map((target) => {
      const [file = '', anchor] = target.split('#');
      return [file === '' ? page : path.posix.join(path.posix.dirname(page), file), anchor];
    });
}

/** A path from the repository's root that a page names, in prose or in a code block: `src/db/pool.ts`, `test/`. */
const REPOSITORY_PATH = /(?<![\w./-])(?:src|test|scripts|docs|db|generated|released|patches)\/[\w./*+-]*/g;

/** Whether a named path is there: a file or folder, or for a pattern such as `src/*.ts` a file it matches. */
function isThere(named: string): boolean {
  if (!named.includes('*')) return existsSync(path.join(ROOT, named));
  const folder = path.join(ROOT, path.posix.dirname(named));
  const pattern = new RegExp(`^${path.posix.basename(named).replace(/\./g, '\\.').replace(/\*/g, '[^/]*')}$`);
  return existsSync(folder) && readdirSync(folder).some((name) => pattern.test(name));
}

/** The repository paths a text names that are not there (a sentence's full stop or comma is not the path's). */
const missingPathsIn = (text: string) =>
  [...text.matchAll(REPOSITORY_PATH)].map(([named]) => named.replace(/[.,]+$/, '')).filter((named) => !isThere(named));

describe('README.md and docs/', () => {
  it(`keeps the README within ${README_MAX_LINES} lines`, () => {
    const lines = textOf('README.md').trimEnd().split('\n').length;
    expect(lines, 'README.md: move the detail into a page of docs/').to.be.at.most(README_MAX_LINES);
  });

  it('links from the README every page of docs/', () => {
    const linked = new Set(linksOf('README.md').map(([file]) => file));
    for (const page of pages.slice(1)) expect([...linked], `README.md links ${page}`).to.include(page);
  });

  it('tells a missing repository path from one that is there', () => {
    expect(
      missingPathsIn(
        'src/core/errors.ts, `test/docs.unit.test.ts`. src/*.ts and src/core/ src/nowhere.ts test/*.nope.ts ' +
          'patches/pg-protocol+1.16.1.patch patches/pg-protocol+0.0.0.patch',
      ),
    ).to.deep.equal(['src/nowhere.ts', 'test/*.nope.ts', 'patches/pg-protocol+0.0.0.patch']);
  });

  it('names only repository paths that exist', () => {
    expect(pages.flatMap((page) => missingPathsIn(textOf(page)).map((named) => `${page}: ${named}`))).to.deep.equal([]);
  });

  it('links only to files and headings that exist', () => {
    for (const page of pages) {
      for (const [file, anchor] of linksOf(page)) {
        expect(existsSync(path.join(ROOT, file)), `${page} links ${file}`).to.equal(true);
        if (anchor !== undefined && file.endsWith('.md')) {
          expect([...anchorsOf(file)], `${page} links ${file}#${anchor}`).to.include(anchor);
        }
      }
    }
  });
});
