import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Who writes each table. A component's tables are written only by the component's own SQL; another
 * component reads them, or asks the owner through its index.ts (a publish changes a report through
 * src/reports/status.ts, a sandbox is made by src/companies). src/db is not scanned: it runs the
 * migrations and knows no table; the triggers of db/migrations are the schema's own.
 */
const OWNERS: Record<string, string[]> = {
  'src/reports': ['reports', 'idempotency_keys'],
  'src/integrations': ['integrations', 'api_keys', 'webhook_deliveries', 'webhook_events'],
  'src/companies': ['companies', 'users', 'user_accounts', 'user_invitations'],
  'src/audit': ['audit_events'],
  // The console's sign-ins: the console's own state, no component's data.
  'src/console': ['console_sessions', 'console_sign_in_failures'],
  // The rate limiter's shared counts per API key and minute: the limiter's state, no component's data.
  'src/platform/limits': ['rate_limit_counts'],
};

/** A statement that writes a table, and the table it names; DO UPDATE, FOR [NO KEY] UPDATE are no statements. */
const WRITE =
  /\b(INSERT\s+INTO|(?<!\b(?:DO|FOR|KEY)\s+)UPDATE|DELETE\s+FROM|TRUNCATE(?:\s+TABLE)?|MERGE\s+INTO)\s+(?:ONLY\s+)?([a-z_][a-z0-9_]*)?/gi;

/** Where a substitution stands in a template's text: no table name, so a write of one is reported. */
const SUBSTITUTION = '${…}';

/** The text of every string and template in a source file (its comments are not strings), SQL comments dropped. */
function stringsOf(file: string, source: string): string[] {
  const texts: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) texts.push(node.text);
    else if (ts.isTemplateExpression(node))
      texts.push(node.head.text + node.templateSpans.map((span) => SUBSTITUTION + span.literal.text).join(''));
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true));
  return texts.map((text) => text.replace(/--.*$/gm, ''));
}

/** The tables a source file's SQL writes ('?' for a write whose table is not written out). */
function tablesWritten(file: string, source: string): string[] {
  return stringsOf(file, source).flatMap((text) =>
    [...text.matchAll(WRITE)].map((match) => match[2]?.toLowerCase() ?? '?'),
  );
}

const sourceFiles = (readdirSync(path.join(ROOT, 'src'), { recursive: true }) as string[])
  .map((name) => path.posix.join('src', name.split(path.sep).join('/')))
  .filter((name) => /\.tsx?$/.test(name) && !name.startsWith('src/db/'))
  .sort();

const ownerOf = (file: string) => Object.keys(OWNERS).find((folder) => file.startsWith(`${folder}/`));

/** The tables the migrations leave: every one created and not dropped since. */
function liveTables(): string[] {
  const tables = new Set<string>();
  const migrations = readdirSync(path.join(ROOT, 'db/migrations'))
    .filter((name) => name.endsWith('.sql'))
    .sort((a, b) => parseInt(a, 10) - parseInt(b, 10));
  for (const name of migrations) {
    const sql = readFileSync(path.join(ROOT, 'db/migrations', name), 'utf8').replace(/--.*$/gm, '');
    for (const [, table] of sql.matchAll(/\bCREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)/gi))
      tables.add(table!.toLowerCase());
    for (const [, list] of sql.matchAll(/\bDROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?([\w\s,]+?)\s*(?:CASCADE\s*)?;/gi))
      for (const table of list!.split(',')) tables.delete(table.trim().toLowerCase());
  }
  return [...tables].sort();
}

describe('table owners (no component writes another component’s tables)', () => {
  it('gives every table the migrations leave exactly one owner', () => {
    const owned = Object.values(OWNERS).flat();
    expect(new Set(owned).size, 'a table with two owners').to.equal(owned.length);
    expect([...owned].sort()).to.deep.equal(liveTables());
  });

  it('finds the writes of SQL in strings and templates, and nothing in comments, locks or upserts', () => {
    const source = [
      '// UPDATE reports in a comment is no statement',
      "const a = 'DELETE FROM webhook_events WHERE id = $1';",
      'const b = `WITH x AS (SELECT 1 FROM reports FOR UPDATE) update   ONLY api_keys SET n = 1`;',
      'const c = `INSERT INTO users (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id`;',
      'const d = `SELECT 1 -- UPDATE companies\n FROM reports FOR NO KEY UPDATE`;',
      'const e = `TRUNCATE TABLE ${table}`;',
    ].join('\n');
    expect(tablesWritten('planted.ts', source)).to.deep.equal(['webhook_events', 'api_keys', 'users', '?']);
  });

  it('finds every write of src/ in its owner’s folder', () => {
    const strays: string[] = [];
    let writes = 0;
    for (const file of sourceFiles) {
      const owner = ownerOf(file);
      for (const table of tablesWritten(file, readFileSync(path.join(ROOT, file), 'utf8'))) {
        writes++;
        if (!owner || !OWNERS[owner]!.includes(table))
          strays.push(
            `${file} writes ${table}: ${owner ? `not one of ${owner}'s tables` : 'its folder owns no table'}`,
          );
      }
    }
    expect(strays).to.deep.equal([]);
    // The scan reads the files it means to: the components' SQL is found.
    expect(writes).to.be.greaterThan(20);
  });
});
