import type { Express, RequestHandler } from 'express';
import request from 'supertest';
import type { Test } from 'supertest';
import { appDepsFor, partnerLimitsFor, poolFor } from '../../src/app-deps.js';
import { createApp, type AppDeps } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { ChangeFeed } from '../../src/db/change-feed.js';
import { withTransaction, type Pool, type Queryable } from '../../src/db/pool.js';
import { createLogger } from '../../src/platform/observability/logger.js';
import { openApiValidator } from '../../src/platform/http/openapi-validator.js';
import { ApiKeyCache } from '../../src/integrations/keys/api-key-cache.js';
import { databaseReports, ReportCache } from '../../src/reports/cache.js';
import { createKey } from '../../src/integrations/keys/api-keys.js';
import { addUser, createCompany, sandboxOf } from '../../src/companies/companies.js';
import type { RateLimiter } from '../../src/platform/limits/rate-limiter.js';
import { assertMatchesContract } from './contract.js';
import { APP_TOKEN, TEST_ENV, TEST_RETRY_POLICY } from './test-settings.js';
import {
  dropProcessDatabases,
  makeProcessTemplate,
  processDatabase,
  startTestDatabase,
  type TestDatabase,
} from './database.js';

/** How the main process hands the database's address to mocha's workers (they share no module state). */
const URL_VARIABLE = 'TEST_DATABASE_URL';
/** The migrated database the processes' own are copied from (database.ts processDatabase). */
const BASE_VARIABLE = 'TEST_DATABASE_BASE_URL';
/** Set once this process works in its own copy. */
const OWN_VARIABLE = 'TEST_DATABASE_OWN';

let database: TestDatabase | undefined;
let sharedPool: Pool | undefined;
let fileFeed: ChangeFeed | undefined;
let sharedApp: Express | undefined;
const keyCaches: ApiKeyCache[] = [];
const rateLimiters: RateLimiter[] = [];

/**
 * Mocha global fixtures: one PostgreSQL for the whole run, started in the main process. Workers are
 * forked after the setup with a copy of its environment, so the address travels there.
 */
export async function mochaGlobalSetup(): Promise<void> {
  database = await startTestDatabase();
  process.env[URL_VARIABLE] = database.url;
  await makeProcessTemplate(database.url);
  process.env[BASE_VARIABLE] = database.url;
}

export async function mochaGlobalTeardown(): Promise<void> {
  if (database) await dropProcessDatabases(database.url).catch(() => undefined);
  await database?.stop();
}

/** Before the first test file of a process: the process's own copy of the database (see database.ts). */
async function ownDatabase(): Promise<void> {
  const base = process.env[BASE_VARIABLE];
  if (!base || process.env[OWN_VARIABLE]) return;
  process.env[URL_VARIABLE] = await processDatabase(base);
  process.env[OWN_VARIABLE] = 'true';
}

/**
 * Root hooks: after each spec file (in parallel mode; after the whole run in serial mode) close what
 * the harness opened for it, so that a worker's next file starts with apps, caches and a change feed
 * of its own. The shared pool stays for a worker's next file (mocha ends the worker after the run):
 * every connection opened costs PostgreSQL a new process. A serial run closes it, so that nothing keeps
 * the process alive.
 */
export const mochaHooks = {
  beforeAll: ownDatabase,
  async afterAll(): Promise<void> {
    const caches = keyCaches.splice(0);
    const limiters = rateLimiters.splice(0);
    const feed = fileFeed;
    const opened = process.env.MOCHA_WORKER_ID === undefined ? sharedPool : undefined;
    sharedApp = undefined;
    fileFeed = undefined;
    if (opened) sharedPool = undefined;
    await Promise.all([...caches.map((cache) => cache.close()), ...limiters.map((limiter) => limiter.close())]);
    await feed?.close();
    await opened?.end();
  },
};

export { APP_TOKEN, TEST_RETRY_POLICY } from './test-settings.js';
export { everyFieldInput, reportInput } from './report-inputs.js';

export function databaseUrl(): string {
  const url = process.env[URL_VARIABLE];
  if (!url) throw new Error('the test database is not started (mochaGlobalSetup)');
  return url;
}

/** The configuration of a test app: the tests' settings, and a test's own over them. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ ...TEST_ENV, DATABASE_URL: databaseUrl(), APP_TOKEN, ...env });
}

export function pool(): Pool {
  // Room for a file's requests and its factories' writes at once, on the one pool they share.
  return (sharedPool ??= poolFor(testConfig({ DATABASE_POOL_MAX: '20' }), databaseUrl()));
}

/**
 * The dependencies of a test app, made as the serving process makes its own (app-deps.ts), with a
 * test's overrides: caches of API keys and reports on a change feed of the app's own, and the retry
 * policy above.
 */
export function appDeps(db: Pool, overrides: Partial<AppDeps> = {}): AppDeps {
  // A test's own limits: no default budget either, whose sync would use the app's pool meanwhile.
  const config = testConfig(overrides.limits ? { RATE_LIMIT_PER_MINUTE: '0' } : {});
  const deps = appDepsFor(config, {
    db,
    appToken: APP_TOKEN,
    logger: createLogger(config.logLevel),
    ...caches(db, overrides),
  });
  closeAfterTheFile(deps.limits.rateLimiter);
  const validator = sharedValidator(config.validateResponses);
  return { ...deps, validator, retryPolicy: TEST_RETRY_POLICY, ...overrides };
}

/**
 * The validator's handlers, built once per test process and shared by its apps: compiling the document's
 * schemas for every app was half of the main suite's CPU. An app given `validator: undefined` builds its own.
 */
const validators = new Map<boolean, RequestHandler[]>();
function sharedValidator(validateResponses: boolean): RequestHandler[] {
  let handlers = validators.get(validateResponses);
  if (!handlers) validators.set(validateResponses, (handlers = openApiValidator({ validateResponses })));
  return handlers;
}

/**
 * Test apps cache API keys and reports as servers do (on a change feed), so every test runs through the
 * caches: an app given its own key authenticator reads reports through that one's feed, if it has one.
 */
function caches(db: Pool, { apiKeys, reports }: Partial<AppDeps>): Pick<AppDeps, 'apiKeys' | 'reports'> {
  const keys = apiKeys ?? keyCache(db);
  const feed = keys instanceof ApiKeyCache ? keys.feed : undefined;
  return { apiKeys: keys, reports: reports ?? (feed ? new ReportCache({ db, feed }) : databaseReports(db)) };
}

/**
 * The partner limits of a test app, as the serving process makes them, with a test's own budget per
 * key and share per company (the tests' settings otherwise).
 */
export function testLimits(db: Pool, { perMinute, perCompany }: { perMinute?: number; perCompany?: number } = {}) {
  const env: Record<string, string> = {};
  if (perMinute !== undefined) env.RATE_LIMIT_PER_MINUTE = String(perMinute);
  if (perCompany !== undefined) env.COMPANY_MAX_IN_FLIGHT = env.COMPANY_MAX_IN_FLIGHT_ALONE = String(perCompany);
  const limits = partnerLimitsFor(testConfig(env), db);
  closeAfterTheFile(limits.rateLimiter);
  return { admission: limits.admission, rateLimiter: limits.rateLimiter! };
}

function closeAfterTheFile(rateLimiter: RateLimiter | undefined): void {
  if (rateLimiter) rateLimiters.push(rateLimiter);
}

/**
 * The key caches of a file's apps share one change feed, as a process's caches do: one LISTEN
 * connection for the file, not one per app. A test that kills or freezes a feed makes its own.
 */
function keyCache(db: Pool): ApiKeyCache {
  fileFeed ??= new ChangeFeed({ connectionString: databaseUrl() });
  const cache = new ApiKeyCache({ db, feed: fileFeed });
  keyCaches.push(cache);
  return cache;
}

/**
 * The pid of the backend serving a change feed's LISTEN connection, for a test that kills or stops
 * that one connection (and no other process's feed: test files run in parallel on one database).
 */
export function feedBackend(feed: ChangeFeed): number {
  const listener = (feed as unknown as { listener?: { processID: number } }).listener;
  if (!listener) throw new Error('the change feed does not listen');
  return listener.processID;
}

/** Ends the change feed's LISTEN connection from the database's side, as a restart or a network fault would. */
export async function killChangeFeed(feed: ChangeFeed): Promise<void> {
  const { rows } = await pool().query<{ gone: boolean }>('SELECT pg_terminate_backend($1) AS gone', [
    feedBackend(feed),
  ]);
  if (!rows[0]?.gone) throw new Error('the change feed was not ended');
}

/** The shared pool behind a count of the queries sent through it: tells a cache's answer from a database read. */
export function countingPool(): { db: Queryable; queries: () => number } {
  let count = 0;
  const db: Queryable = {
    query: ((...args: unknown[]) => {
      count++;
      return (pool().query as (...a: unknown[]) => unknown)(...args);
    }) as Queryable['query'],
  };
  return { db, queries: () => count };
}

/** A fresh app on its own pool: a second server process sharing the database. */
export function newApp(overrides: Partial<AppDeps> = {}): { app: Express; pool: Pool } {
  const ownPool = poolFor(testConfig(), databaseUrl());
  return { app: createApp(appDeps(ownPool, overrides)), pool: ownPool };
}

export function app(): Express {
  return (sharedApp ??= createApp(appDeps(pool())));
}

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head' | 'options';

/**
 * supertest on the app (or a base URL of a running server), with every response checked against
 * openapi.yaml (status declared, body valid). Use it for every request in the tests, so each test is
 * also a contract test.
 */
export function api(target: Express | string = app()): Record<Method, (url: string) => Test> {
  const agent = request(target);
  const wrap = (method: Method) => (url: string) =>
    agent[method](url).expect((res) => {
      if (method !== 'head' && method !== 'options') assertMatchesContract(method, url, res);
    });
  return {
    get: wrap('get'),
    post: wrap('post'),
    put: wrap('put'),
    patch: wrap('patch'),
    delete: wrap('delete'),
    head: wrap('head'),
    options: wrap('options'),
  };
}

let counter = 0;
export const unique = (label = 'x') => `${label}-${process.pid}-${Date.now().toString(36)}-${++counter}`;

export interface TestCompany {
  companyId: string;
  key: string;
  inspectors: { name: string; email: string }[];
}

/** A company with an API key and, optionally, inspectors (name, e-mail). */
export async function newCompany(inspectors: { name: string; email: string }[] = []): Promise<TestCompany> {
  return withTransaction(pool(), async (db) => {
    const company = await createCompany(db, unique('company'));
    for (const inspector of inspectors) await addUser(db, company.id, inspector.name, inspector.email);
    const { key } = await createKey(db, company.id);
    return { companyId: company.id, key, inspectors };
  });
}

/** A test key of the company, and its sandbox (a company of its own, made on first use). */
export async function newTestKey(companyId: string): Promise<{ key: string; sandboxId: string }> {
  const { key } = await createKey(pool(), companyId, 'test');
  return { key, sandboxId: await sandboxOf(pool(), companyId) };
}
