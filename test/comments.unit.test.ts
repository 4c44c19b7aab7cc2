import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * A comment says why the code is so, in the present tense: what a run measured, what the code did
 * before and an issue's number belong in commit messages and docs/performance.md. A figure with a unit
 * of time, size, share or rate is taken for a measurement unless it is one of these design facts: the
 * code's own constants and the contract's, which a comment may name to explain a choice.
 */
const DESIGN_FACTS = new Set([
  '1 MiB', // the largest body (openapi.yaml's 413), and so the largest report and a page's budget
  '60 s', // a load balancer's idle timeout (AWS ALB's default), which KEEP_ALIVE_TIMEOUT_MS outlasts
  '30 s', // REQUEST_TIMEOUT_MS, Node's own check interval, the cluster's longest restart back-off
  '100 ms', // the cluster's first restart back-off (RESTART_BASE_MS)
  '5 s', // prom-client's limit for collecting the workers' metrics
  '24 hours', // an Idempotency-Key's lifetime
  '30 days', // a sandbox report's lifetime
  '10%', // the jitter of the webhook retry schedule
]);

const NUMBER = String.raw`\d+(?:[_,.]\d+)*(?:\s*[-–]\s*\d+(?:[_,.]\d+)*)?`;
/** What reads as a measurement, a piece of history or a pointer to an issue. */
const FORBIDDEN: [string, RegExp][] = [
  [
    'a duration',
    new RegExp(String.raw`${NUMBER}(?:\s*(?:ns|µs|ms|milliseconds?|secs?|seconds?|minutes?|hours?|days?)|\s+s)\b`, 'g'),
  ],
  ['a size', new RegExp(String.raw`${NUMBER}\s*(?:[KMGT]i?B|kB)\b`, 'g')],
  ['a share', new RegExp(String.raw`${NUMBER}\s*%`, 'g')],
  ['a ratio', new RegExp(String.raw`${NUMBER}\s*×|\b\d+(?:\.\d+)?x\b`, 'g')],
  ['a rate', new RegExp(String.raw`${NUMBER}\s+(?:[a-z]+\s*)?(?:/s|per second|a second)\b`, 'g')],
  ['a percentile', /\bp(?:50|75|90|95|99|999)\b/gi],
  ['a measurement', /\bmeasured\b[^.;\d]*\d+|\bCPU profile\b|\bbenchmarked\b/gi],
  ['an issue', /\b(?:issue|ticket|bug|PR|pull request)\s*#?\d+|(?:^|\s)#\d+\b/gi],
  [
    'history',
    /\b(?:used to be|previously|formerly|originally|the (?:first|old|previous) version|(?:before|since|after) (?:this|the) fix)\b/gi,
  ],
];

/** Text in quotes or backticks is an example of a value (`"5s,5m,30m"`), not a figure of the comment's. */
const withoutQuoted = (text: string) => text.replace(/"[^"\n]*"|`[^`\n]*`/g, '""');

/** Every comment of a TypeScript source: its own (`//`, `/* … *\/`) and the SQL ones (`--`) in its strings. */
export function commentsOf(file: string, source: string): { line: number; text: string }[] {
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found = new Map<number, string>();
  const take = (ranges: ts.CommentRange[] | undefined) => {
    for (const range of ranges ?? []) found.set(range.pos, source.slice(range.pos, range.end));
  };
  const visit = (node: ts.Node): void => {
    take(ts.getLeadingCommentRanges(source, node.getFullStart()));
    take(ts.getTrailingCommentRanges(source, node.getEnd()));
    if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node))
      for (const match of node.getText(sourceFile).matchAll(/--.*$/gm))
        found.set(node.getStart(sourceFile) + match.index, match[0]);
    node.getChildren(sourceFile).forEach(visit);
  };
  visit(sourceFile);
  return [...found]
    .sort(([a], [b]) => a - b)
    .map(([pos, text]) => ({ line: sourceFile.getLineAndCharacterOfPosition(pos).line + 1, text }));
}

/** A comment's words without its markers (`//`, `/**`, ` * `, `--`), so that a match across lines reads as prose. */
const wordsOf = (comment: string) => comment.replace(/^\s*(?:\/\/+|\/\*+|\*+\/?|--)\s?/gm, '').replace(/\*\/$/, '');

/** Every figure or phrase of a comment that FORBIDDEN matches, design facts included: [kind, the words]. */
function matchesIn(comment: string): [string, string][] {
  const text = withoutQuoted(wordsOf(comment));
  return FORBIDDEN.flatMap(([kind, pattern]) =>
    [...text.matchAll(pattern)].map((match): [string, string] => [kind, match[0].trim().replace(/\s+/g, ' ')]),
  );
}

const isDesignFact = (words: string) => DESIGN_FACTS.has(words.replace(/^±/, ''));

/** What a comment says that reads as a measurement, history or an issue: "<kind>: <the words>". */
export function narrationIn(comment: string): string[] {
  return matchesIn(comment)
    .filter(([, words]) => !isDesignFact(words))
    .map(([kind, words]) => `${kind}: ${words}`);
}

const packageScripts = Object.keys(
  (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts,
);
const migrations = readdirSync(path.join(ROOT, 'db/migrations'));

/** What a comment points to that does not exist: a page or its paragraph, a migration, an npm script. */
export function deadPointersIn(comment: string): string[] {
  const dead: string[] = [];
  for (const [, page, title] of comment.matchAll(/\b(docs\/[\w-]+\.md)(?:,?\s*\*?\s*"([^"]+)")?/g)) {
    if (!existsSync(path.join(ROOT, page!))) dead.push(page!);
    else if (title && !readFileSync(path.join(ROOT, page!), 'utf8').includes(title)) dead.push(`${page}, "${title}"`);
  }
  for (const [, id] of comment.matchAll(/\bmigrations?\s+(\d+)\b/gi))
    if (!migrations.some((name) => name.startsWith(`${id}_`))) dead.push(`migration ${id}`);
  for (const [, file] of comment.matchAll(/\bdb\/migrations\/([\w-]+\.sql)\b/g))
    if (!migrations.includes(file!)) dead.push(`db/migrations/${file}`);
  for (const [, script] of comment.matchAll(/\bnpm run ([\w:-]+)/g))
    if (!packageScripts.includes(script!)) dead.push(`npm run ${script}`);
  return dead;
}

const sourceFiles = (readdirSync(path.join(ROOT, 'src'), { recursive: true }) as string[])
  .map((name) => path.posix.join('src', name.split(path.sep).join('/')))
  .filter((name) => /\.tsx?$/.test(name))
  .sort();

/** Each finding in src/ as "<file>:<line> <finding>". */
function findings(check: (comment: string) => string[]): string[] {
  return sourceFiles.flatMap((file) =>
    commentsOf(file, readFileSync(path.join(ROOT, file), 'utf8')).flatMap(({ line, text }) =>
      check(text).map((finding) => `${file}:${line} ${finding}`),
    ),
  );
}

describe('comments (they explain, never narrate)', () => {
  it('finds comments of every kind, and in SQL, and nothing in strings', () => {
    const source = [
      '/** A barrier of 500 ms at most. */',
      'const a = 1; // trailing',
      "const b = 'no // comment here';",
      'const c = `SELECT 1 -- the SQL one\n FROM t`;',
    ].join('\n');
    expect(commentsOf('planted.ts', source).map(({ line, text }) => [line, text])).to.deep.equal([
      [1, '/** A barrier of 500 ms at most. */'],
      [2, '// trailing'],
      [4, '-- the SQL one'],
    ]);
  });

  it('tells a measurement, history and an issue from a design fact', () => {
    expect(
      narrationIn('// measured: 32 MiB of bodies kept answers 100-280 ms late, 844 requests/s, B’s p99 2.3–2.8×'),
    ).to.deep.equal([
      'a duration: 100-280 ms',
      'a size: 32 MiB',
      'a ratio: 2.3–2.8×',
      'a rate: 844 requests/s',
      'a percentile: p99',
      'a measurement: measured: 32',
    ]);
    expect(narrationIn('/* about 40% less client CPU (issue 23); the first version read every row */')).to.deep.equal([
      'a share: 40%',
      'an issue: issue 23',
      'history: the first version',
    ]);
    expect(
      narrationIn('// At least one whole body (1 MiB); ±10% jitter; "5s,5m,30m"; 404s; 0x80; 32 bytes'),
    ).to.deep.equal([]);
  });

  it('tells a dead pointer from a live one', () => {
    expect(
      deadPointersIn('(docs/decisions.md, "Writes in batches"), migration 16, `npm run bench:fairness`'),
    ).to.deep.equal([]);
    expect(
      deadPointersIn('(docs/decisions.md, "No such paragraph"), docs/nowhere.md, migration 999, npm run nope'),
    ).to.deep.equal(['docs/decisions.md, "No such paragraph"', 'docs/nowhere.md', 'migration 999', 'npm run nope']);
  });

  it('finds no figure from a run, no history and no issue number in the comments of src/', () => {
    expect(findings(narrationIn)).to.deep.equal([]);
    // The scan reads the files it means to.
    expect(sourceFiles.length).to.be.greaterThan(50);
  });

  it('allows only design facts that the comments of src/ state (an unused one goes)', () => {
    const stated = new Set(
      findings((comment) => matchesIn(comment).map(([, words]) => words.replace(/^±/, ''))).map((finding) =>
        finding.replace(/^\S+ /, ''),
      ),
    );
    expect([...DESIGN_FACTS].filter((fact) => !stated.has(fact))).to.deep.equal([]);
  });

  it('finds every page, paragraph, migration and npm script the comments of src/ point to', () => {
    expect(findings(deadPointersIn)).to.deep.equal([]);
  });
});
