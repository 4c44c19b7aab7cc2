/**
 * `npm run bench:pair -- <git ref>`: what a change costs, measured against the service as it was at
 * <ref>. Both are built for production and run side by side on one embedded PostgreSQL (a database
 * each, seeded alike); each case drives one of them at a time with autocannon, in rounds that
 * alternate which goes first, and prints each side's median requests/s and the median of the rounds'
 * ratios (this tree / ref). One side idles while the other is driven, so both see the same machine.
 *
 * Environment (optional): PAIR_ROUNDS (default 5), PAIR_DURATION (seconds per run, default 5),
 * PAIR_CONNECTIONS (default 16), PAIR_ONLY (only the cases whose names contain it). The service of this tree gets RATE_LIMIT_PER_MINUTE=1000000 (a budget
 * the run never reaches, so that the limiter's cost is in the figures).
 */
import autocannon from 'autocannon';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { runMigrations } from '../../src/db/migrate.js';
import { freePort } from '../../src/local/index.js';
import { benchReport, seedCompany, type SeededCompany } from './seed.js';
import { buildProduction } from '../production-build.js';
import {
  cleanUpOnSignals,
  formatTable,
  onCleanUp,
  ROOT,
  runBench,
  serviceEnv,
  startBenchDatabase,
  startChild,
  waitUntilUp,
} from './lifecycle.js';

const ROUNDS = Number(process.env.PAIR_ROUNDS ?? 5);
const DURATION = Number(process.env.PAIR_DURATION ?? 5);
const CONNECTIONS = Number(process.env.PAIR_CONNECTIONS ?? 16);

interface Side {
  name: string;
  url: string;
  company: SeededCompany;
  ids: string[];
}

function git(args: string[], cwd = ROOT): string {
  const result = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout.trim();
}

/** A detached worktree of ref, sharing this tree's node_modules, built for production. */
async function buildRef(ref: string): Promise<string> {
  const dir = path.join(await mkdtemp(path.join(os.tmpdir(), 'intake-pair-')), 'tree');
  git(['worktree', 'add', '--detach', dir, ref]);
  onCleanUp(async () => git(['worktree', 'remove', '--force', dir]));
  await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  const built = spawnSync('npm', ['run', '--silent', 'build'], { cwd: dir, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`building ${ref} failed: ${built.stderr}`);
  return dir;
}

/** A database of its own in the cluster, migrated by the tree that will serve it, with one seeded company. */
async function seededDatabase(adminUrl: string, name: string, treeRoot: string) {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = adminUrl.replace(/\/postgres$/, `/${name}`);
  if (treeRoot === ROOT) await runMigrations(url);
  else {
    const migrated = spawnSync(process.execPath, ['--import', 'tsx', '-e', migrateScript(url)], { cwd: treeRoot });
    if (migrated.status !== 0) throw new Error(`migrating ${name} failed: ${String(migrated.stderr)}`);
  }
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const company = await seedCompany(db, 'Pair', 1_000);
  const { rows } = await db.query<{ id: string }>('SELECT id FROM reports ORDER BY rest_id LIMIT 100');
  await db.end();
  return { url, company, ids: rows.map((r) => r.id) };
}

const migrateScript = (url: string) =>
  `import('./src/db/migrate.ts').then((m) => m.runMigrations(${JSON.stringify(url)})).then(() => process.exit(0))`;

async function startSide(name: string, treeRoot: string, databaseUrl: string, seeded: Omit<Side, 'name' | 'url'>) {
  const port = await freePort();
  const prof = process.env.PAIR_CPU_PROF;
  const args = [
    ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(prof, name.replace(/\W+/g, '-'))}`] : []),
    ...buildArgs(treeRoot),
  ];
  startChild(name, args, serviceEnv(databaseUrl, port));
  const url = `http://127.0.0.1:${port}`;
  await waitUntilUp(`${url}/auth`, { 'x-api-key': seeded.company.key });
  await waitUntilUp(`${url}/readyz`);
  return { company: seeded.company, ids: seeded.ids, name, url };
}

/** The production start of the tree at treeRoot (its dist/server.js, with this package's node flags). */
function buildArgs(treeRoot: string): string[] {
  return buildProductionArgs.map((a) => (a === 'dist/server.js' ? path.join(treeRoot, 'dist/server.js') : a));
}
let buildProductionArgs: string[] = [];

const CASES = [
  {
    name: 'GET /reports/{id}',
    requests: (side: Side) => {
      let n = 0;
      return [
        {
          method: 'GET' as const,
          setupRequest: (req: object) => ({ ...req, path: `/reports/${side.ids[n++ % side.ids.length]}` }),
        },
      ];
    },
  },
  {
    name: 'GET /reports?limit=20',
    requests: () => [{ method: 'GET' as const, path: '/reports?limit=20' }],
  },
  createCase('POST /reports/new (create)', false),
  createCase('POST /reports/new (create, Idempotency-Key)', true),
  {
    // The side's seeded restIds (seed-1 … seed-1000), spread so that concurrent updates rarely wait on one row.
    name: 'POST /reports/new (update)',
    requests: (side: Side) => {
      let n = 0;
      return [
        {
          method: 'POST' as const,
          path: '/reports/new',
          setupRequest: (req: autocannon.Request) => ({
            ...req,
            body: JSON.stringify(benchReport(`seed-${1 + ((++n * 7919) % 1_000)}`, side.company.inspectorEmail)),
          }),
        },
      ];
    },
  },
];

/** Creates with restIds never used before; with `keyed`, each also with an Idempotency-Key of its own. */
function createCase(name: string, keyed: boolean) {
  return {
    name,
    requests: (side: Side) => {
      let n = 0;
      const prefix = randomBytes(4).toString('hex');
      return [
        {
          method: 'POST' as const,
          path: '/reports/new',
          setupRequest: (req: autocannon.Request) => {
            const restId = `pair-${prefix}-${++n}`;
            const body = JSON.stringify(benchReport(restId, side.company.inspectorEmail));
            return keyed ? { ...req, body, headers: { ...req.headers, 'idempotency-key': restId } } : { ...req, body };
          },
        },
      ];
    },
  };
}

async function drive(side: Side, testCase: (typeof CASES)[number], duration: number): Promise<number> {
  const result = await autocannon({
    url: side.url,
    connections: CONNECTIONS,
    duration,
    headers: { 'x-api-key': side.company.key, 'content-type': 'application/json' },
    requests: testCase.requests(side),
  });
  if (process.env.PAIR_DEBUG)
    console.log(
      JSON.stringify({
        errors: result.errors,
        timeouts: result.timeouts,
        codes: result.statusCodeStats,
        sent: result.requests.sent,
      }),
    );
  // Requests cut off when the run ends count as errors: only answers other than 2xx are a failure.
  if (result.non2xx > 0) throw new Error(`${side.name}: ${result.non2xx} answers other than 2xx`);
  return result.requests.average;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const ref = process.argv[2];
  if (!ref) throw new Error('usage: npm run bench:pair -- <git ref>');
  cleanUpOnSignals();
  const refRoot = await buildRef(git(['rev-parse', ref]));
  buildProductionArgs = buildProduction();
  const { database } = await startBenchDatabase('intake-pair-pg-');
  const before = await seededDatabase(database.url, 'pair_ref', refRoot);
  const after = await seededDatabase(database.url, 'pair_tree', ROOT);
  const sides = [
    await startSide(ref, refRoot, before.url, before),
    await startSide('this tree', ROOT, after.url, after),
  ];
  const lines: string[][] = [];
  const only = process.env.PAIR_ONLY;
  for (const testCase of CASES.filter((c) => !only || c.name.includes(only))) {
    for (const side of sides) await drive(side, testCase, 1); // warm-up
    const figures = sides.map(() => [] as number[]);
    const ratios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order) figures[i]!.push(await drive(sides[i]!, testCase, DURATION));
      ratios.push(figures[1]!.at(-1)! / figures[0]!.at(-1)!);
      console.log(`${testCase.name} round ${round + 1}: ${figures.map((f) => f.at(-1)!.toFixed(0)).join(' / ')}`);
    }
    lines.push([
      testCase.name,
      median(figures[0]!).toFixed(0),
      median(figures[1]!).toFixed(0),
      median(ratios).toFixed(3),
      `${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}`,
    ]);
  }
  console.log(`\n${formatTable(['case', `${ref} req/s`, 'this tree req/s', 'ratio (median)', 'ratios'], lines)}`);
  console.log(
    `${ROUNDS} rounds of ${DURATION} s, ${CONNECTIONS} connections; load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

runBench(main);
