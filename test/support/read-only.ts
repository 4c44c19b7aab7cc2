import { expect } from 'chai';
import type { Express } from 'express';
import type { Response, Test } from 'supertest';
import { createApp, type AppDeps } from '../../src/app.js';
import { createPool, type Pool, type Queryable } from '../../src/db/pool.js';
import { ApiKeyCache } from '../../src/integrations/keys/api-key-cache.js';
import { consoleClient, signIn } from './console.js';
import { api, APP_TOKEN, appDeps, reportInput, unique } from './harness.js';
import type { HttpsReceiver } from './https-receiver.js';
import { auth } from './webhooks.js';

/**
 * What the tests of a read-only database (default_transaction_read_only, a hot standby) share: a company
 * with everything a request can name, made while the database was writable; every route that writes,
 * which must answer 503 "database is read-only" and change nothing; every route that only reads, which
 * must answer 200 as before.
 */

/** The answer of every write on a read-only database. */
export const READ_ONLY = { error: 'database is read-only' };

/** An app on a database of a test's own, its keys and reports cached on a change feed of that database. */
export interface OwnApp {
  app: Express;
  db: Pool;
  apiKeys: ApiKeyCache;
  close(): Promise<void>;
}

export function appOn(url: string, overrides: Partial<AppDeps> = {}): OwnApp {
  const db = createPool({ connectionString: url, max: 10 });
  const apiKeys = new ApiKeyCache({ db, connectionString: url });
  const app = createApp(appDeps(db, { apiKeys, ...overrides }));
  const close = async () => {
    await apiKeys.close();
    await db.end();
  };
  return { app, db, apiKeys, close };
}

/** A company's things, made while the database was writable. */
export interface Holdings {
  companyId: string;
  key: string;
  keyId: string;
  testKey: string;
  restId: string;
  /** A partner report, new. */
  reportId: string;
  /** Its webhook delivered: an event of the feed. */
  eventId: string;
  /** Its webhook failed, retried in the background: a pending event, due. */
  pendingEventId: string;
  appReportId: string;
  sandboxReportId: string;
  /** An Idempotency-Key kept with its answer, and the body it was sent with. */
  idempotent: { key: string; body: Record<string, unknown> };
  console: { cookie: string; csrf: string };
}

const PUBLISHED_URL = 'https://reports.example.com/r/1';

/** Makes the company through the app (writable): keys of both worlds, addresses, reports, events, a console session. */
export async function seed(app: Express, receiver: HttpsReceiver): Promise<Holdings> {
  const company = await api(app)
    .post('/internal/companies')
    .set(auth)
    .send({ name: unique('read-only') })
    .expect(201);
  const companyId = company.body.id as string;
  const internal = `/internal/companies/${companyId}`;
  const email = `${unique('dana')}@example.com`;
  await api(app).post(`${internal}/users`).set(auth).send({ name: 'Dana', email }).expect(201);
  const live = await api(app).post(`${internal}/api-keys`).set(auth).send({}).expect(201);
  const test = await api(app).post(`${internal}/api-keys`).set(auth).send({ mode: 'test' }).expect(201);
  const path = `/${unique('live')}`;
  // The first publish is delivered; every request after fails, so the second's event waits to be retried.
  receiver.on(path, { status: 204 }, { status: 500 });
  await api(app)
    .put(`${internal}/webhook`)
    .set(auth)
    .send({ url: receiver.url(path) })
    .expect(200);
  const sandboxUrl = receiver.url(`/${unique('sandbox')}`);
  await api(app).put(`${internal}/sandbox/webhook`).set(auth).send({ url: sandboxUrl }).expect(200);

  const key = live.body.key as string;
  const create = async (body: Record<string, unknown>, withKey = key) =>
    (await api(app).post('/reports/new').set('X-API-KEY', withKey).send(body).expect(200)).body.id as string;
  const publish = async (id: string, extra = {}) =>
    (
      await api(app)
        .post(`${internal}/reports/${id}/publish`)
        .set(auth)
        .send({ publishedUrl: PUBLISHED_URL, notifyIntegration: true, ...extra })
        .expect(200)
    ).body.webhook.eventId as string;
  const restId = unique('crm');
  const reportId = await create(reportInput({ restId, inspectorEmails: email }));
  const eventId = await publish(await create(reportInput({ restId: unique('crm') })));
  const pendingEventId = await publish(await create(reportInput({ restId: unique('crm') })), {
    whenDeliveryFails: 'retry',
  });
  const idempotent = { key: unique('idem'), body: reportInput({ restId: unique('crm') }) };
  await api(app)
    .post('/reports/new')
    .set('X-API-KEY', key)
    .set('Idempotency-Key', idempotent.key)
    .send(idempotent.body)
    .expect(200);
  const appReport = await api(app).post(`${internal}/reports`).set(auth).send(reportInput()).expect(201);
  return {
    companyId,
    key,
    keyId: live.body.id as string,
    testKey: test.body.key as string,
    restId,
    reportId,
    eventId,
    pendingEventId,
    appReportId: appReport.body.id as string,
    sandboxReportId: await create(reportInput(), test.body.key as string),
    idempotent,
    console: await signIn(app),
  };
}

type Request = [name: string, send: (app: Express) => Test];

/** Every operation of openapi.yaml that writes, on the company's things. */
export function writeRequests(h: Holdings): Request[] {
  const internal = `/internal/companies/${h.companyId}`;
  const partner = (app: Express, key = h.key) => ({
    post: (path: string) => api(app).post(path).set('X-API-KEY', key),
    delete: (path: string) => api(app).delete(path).set('X-API-KEY', key),
  });
  const app_ = (app: Express) => ({
    post: (path: string, body: object = {}) => api(app).post(`${internal}${path}`).set(auth).send(body),
    put: (path: string, body: object) => api(app).put(`${internal}${path}`).set(auth).send(body),
    delete: (path: string) => api(app).delete(`${internal}${path}`).set(auth),
  });
  const url = 'https://127.0.0.1:9/elsewhere';
  return [
    ['a create', (a) => partner(a).post('/reports/new').send(reportInput())],
    [
      'an update by restId',
      (a) =>
        partner(a)
          .post('/reports/new')
          .send(reportInput({ restId: h.restId })),
    ],
    [
      'a create with a new Idempotency-Key',
      (a) => partner(a).post('/reports/new').set('Idempotency-Key', unique('k')).send(reportInput()),
    ],
    [
      'a retry of a kept Idempotency-Key',
      (a) => partner(a).post('/reports/new').set('Idempotency-Key', h.idempotent.key).send(h.idempotent.body),
    ],
    ['a sandbox start', (a) => partner(a, h.testKey).post(`/sandbox/reports/${h.sandboxReportId}/start`)],
    [
      'a sandbox publish',
      (a) =>
        partner(a, h.testKey).post(`/sandbox/reports/${h.sandboxReportId}/publish`).send({ notifyIntegration: true }),
    ],
    ['a sandbox wipe', (a) => partner(a, h.testKey).delete('/sandbox/reports')],
    ['a partner redelivery', (a) => partner(a).post(`/events/${h.eventId}/redeliver`)],
    [
      'a new company',
      (a) =>
        api(a)
          .post('/internal/companies')
          .set(auth)
          .send({ name: unique('company') }),
    ],
    ['a new user', (a) => app_(a).post('/users', { name: 'Casey', email: `${unique('casey')}@example.com` })],
    ['a new key', (a) => app_(a).post('/api-keys')],
    ['a key revoked', (a) => app_(a).delete(`/api-keys/${h.keyId}`)],
    ['a webhook address', (a) => app_(a).put('/webhook', { url })],
    ['a test delivery', (a) => app_(a).post('/webhook/test')],
    ['a secret rotated', (a) => app_(a).post('/webhook/secret')],
    ["the sandbox's webhook address", (a) => app_(a).put('/sandbox/webhook', { url })],
    ["the sandbox's test delivery", (a) => app_(a).post('/sandbox/webhook/test')],
    ["the sandbox's secret rotated", (a) => app_(a).post('/sandbox/webhook/secret')],
    ['the integration revoked', (a) => app_(a).delete('/integration')],
    ['an application report', (a) => app_(a).post('/reports', reportInput())],
    ['a start', (a) => app_(a).post(`/reports/${h.appReportId}/start`)],
    [
      'a publish',
      (a) => app_(a).post(`/reports/${h.reportId}/publish`, { publishedUrl: PUBLISHED_URL, notifyIntegration: true }),
    ],
    ['an application redelivery', (a) => app_(a).post(`/events/${h.eventId}/redeliver`)],
    ['a recovery of failed events', (a) => app_(a).post('/events/redeliver', { since: '2020-01-01T00:00:00Z' })],
  ];
}

/** Every operation of openapi.yaml that only reads, on the company's things. */
export function readRequests(h: Holdings): Request[] {
  const internal = `/internal/companies/${h.companyId}`;
  const partner = (app: Express, path: string, key = h.key) => api(app).get(path).set('X-API-KEY', key);
  const application = (app: Express, path: string) => api(app).get(`${internal}${path}`).set(auth);
  return [
    ['GET /auth', (a) => partner(a, '/auth')],
    ['GET /auth with a test key', (a) => partner(a, '/auth', h.testKey)],
    ['GET /reports', (a) => partner(a, '/reports')],
    ['GET /reports by restId', (a) => partner(a, `/reports?restId=${h.restId}`)],
    ['GET /reports/{reportId}', (a) => partner(a, `/reports/${h.reportId}`)],
    ['GET /reports of the sandbox', (a) => partner(a, '/reports', h.testKey)],
    ['GET /events', (a) => partner(a, '/events')],
    ['GET /events/{eventId}', (a) => partner(a, `/events/${h.eventId}`)],
    ['the keys', (a) => application(a, '/api-keys')],
    ['the integration', (a) => application(a, '/integration')],
    ['the reports', (a) => application(a, '/reports')],
    ['a report', (a) => application(a, `/reports/${h.reportId}`)],
    ['the delivery log', (a) => application(a, '/webhook-deliveries')],
    ['the events', (a) => application(a, '/events')],
    ['GET /readyz', (a) => api(a).get('/readyz')],
    ['GET /metrics', (a) => api(a).get('/metrics').set(auth)],
  ];
}

/**
 * Every table's rows, as one digest each: what "nothing written" compares. Unlogged tables (the rate
 * limiter's counts, worth nothing after a crash) are left out: a standby has no rows of them to read.
 */
export async function tableDigest(db: Queryable): Promise<Record<string, string>> {
  const { rows: tables } = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relpersistence = 'p' ORDER BY c.relname`,
  );
  const digest: Record<string, string> = {};
  for (const { name } of tables) {
    const { rows } = await db.query<{ n: string; md5: string }>(
      `SELECT count(*) AS n, md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')) AS md5 FROM "${name}" t`,
    );
    digest[name] = `${rows[0]!.n} rows, ${rows[0]!.md5}`;
  }
  return digest;
}

/** Sends every write: each answers 503 "database is read-only" with Retry-After; no row changes, no webhook leaves. */
export async function expectWritesRefused(app: Express, h: Holdings, db: Queryable, receiver: HttpsReceiver) {
  const before = await tableDigest(db);
  const sent = receiver.received.length;
  for (const [name, send] of writeRequests(h)) {
    const res: Response = await send(app);
    expect([res.status, res.body], name).to.deep.equal([503, READ_ONLY]);
    expect(res.headers['retry-after'], name).to.equal('5');
  }
  expect(await tableDigest(db)).to.deep.equal(before);
  expect(receiver.received.length, 'webhooks sent').to.equal(sent);
}

/** Sends every read: each answers 200. */
export async function expectReadsAnswered(app: Express, h: Holdings) {
  for (const [name, send] of readRequests(h)) {
    const res: Response = await send(app);
    expect(res.status, `${name}: ${res.text}`).to.equal(200);
  }
}

/**
 * The console: its pages answer 200; every form answers a 503 page with Retry-After saying why, and changes
 * nothing. Even those that only read write something: a secret revealed goes in the audit trail, and the
 * publish's question, as every outcome, is kept in the session for the page the redirect names.
 */
export async function expectConsoleOnReadOnly(app: Express, h: Holdings, db: Queryable, receiver: HttpsReceiver) {
  const company = `/console/companies/${h.companyId}`;
  const rest = `${company}/integrations/rest-api`;
  const get = (path: string) => consoleClient(app).get(path).set('Cookie', h.console.cookie);
  const post = (path: string, fields: Record<string, string> = {}) =>
    consoleClient(app)
      .post(path)
      .set('Cookie', h.console.cookie)
      .type('form')
      .send({ _csrf: h.console.csrf, ...fields });
  const publishing = { publishedUrl: PUBLISHED_URL, publishedAt: '' };
  const reads: [string, () => Test][] = [
    ...[
      '/console/companies',
      company,
      `${company}/reports`,
      `${company}/reports/${h.reportId}`,
      rest,
      `${rest}/revoke`,
    ].map((path): [string, () => Test] => [`GET ${path}`, () => get(path)]),
  ];
  for (const [name, send] of reads) expect((await send()).status, name).to.equal(200);

  const before = await tableDigest(db);
  const sent = receiver.received.length;
  const url = 'https://127.0.0.1:9/elsewhere';
  const writes: [string, () => Test][] = [
    ['sign in', () => consoleClient(app).post('/console/sign-in').type('form').send({ token: APP_TOKEN })],
    ['the secret revealed', () => post(`${rest}/webhook/secret/reveal`)],
    ["the publish's question", () => post(`${company}/reports/${h.reportId}/publish`, publishing)],
    ['sign out', () => post('/console/sign-out')],
    ['create company', () => post('/console/companies', { name: unique('company') })],
    ['add inspector', () => post(`${company}/inspectors`, { name: 'Casey', email: `${unique('casey')}@example.com` })],
    ['generate key', () => post(`${rest}/api-keys`)],
    ['revoke key', () => post(`${rest}/api-keys/${h.keyId}/revoke`)],
    ['save webhook', () => post(`${rest}/webhook`, { url, eventTypes: 'report.published' })],
    ["save the sandbox's webhook", () => post(`${rest}/sandbox/webhook`, { url, eventTypes: 'report.published' })],
    ['rotate secret', () => post(`${rest}/webhook/secret/rotate`)],
    ['send test delivery', () => post(`${rest}/webhook/test`)],
    ['redeliver', () => post(`${rest}/events/${h.eventId}/redeliver`)],
    ['redeliver failed since', () => post(`${rest}/events/redeliver`, { since: '2020-01-01T00:00' })],
    ['revoke integration', () => post(`${rest}/revoke`)],
    ['start', () => post(`${company}/reports/${h.appReportId}/start`)],
    ['publish', () => post(`${company}/reports/${h.reportId}/publish`, { ...publishing, answer: 'notify' })],
  ];
  for (const [name, send] of writes) {
    const res = await send();
    expect(res.status, `${name}: ${res.text.slice(0, 2000)}`).to.equal(503);
    expect(res.headers['retry-after'], name).to.equal('5');
    expect(res.text, name).to.include(`<p>${READ_ONLY.error}</p>`);
  }
  expect(await tableDigest(db)).to.deep.equal(before);
  expect(receiver.received.length, 'webhooks sent').to.equal(sent);
}
