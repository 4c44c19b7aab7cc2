import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { api, newCompany, pool, reportInput, type TestCompany } from '../support/harness.js';
import { consoleClient, signIn } from '../support/console.js';
import { eventsSuite, type Event } from '../support/events.js';
import type { ReceivedWebhook } from '../support/https-receiver.js';
import { withSandbox } from '../support/sandbox.js';
import { auth, verifies } from '../support/webhooks.js';

/**
 * The report.started event through HTTP, end to end: an integration that chose it gets a signed
 * webhook, sent in the background, when a report of the API is started (application API, console,
 * sandbox); the default choice records nothing; the feed lists both types with `type`. The worker runs
 * in this process on the suite's notifier, which trusts the local receiver.
 */

const BOTH = ['report.published', 'report.started'];

describe('report.started: the second event type', () => {
  const { suite, startWorker, publish, apiReport, settled } = eventsSuite();

  /** A company whose live webhook goes to its own path of the receiver, receiving `eventTypes` (absent: the default). */
  async function subscribed(eventTypes?: string[]): Promise<TestCompany & { path: string; secret: string }> {
    const company = await newCompany();
    const path = `/${company.companyId}`;
    const body = { url: suite.receiver.url(path), ...(eventTypes ? { eventTypes } : {}) };
    const res = await api().put(`/internal/companies/${company.companyId}/webhook`).set(auth).send(body).expect(200);
    expect(res.body.eventTypes).to.deep.equal(eventTypes ?? ['report.published']);
    return { ...company, path, secret: res.body.secret as string };
  }

  const start = (companyId: string, reportId: string) =>
    api().post(`/internal/companies/${companyId}/reports/${reportId}/start`).set(auth);

  /** The key's feed once it holds `count` events (an event shows once older transactions are over). */
  async function feedOf(key: string, count: number): Promise<Event[]> {
    for (const deadline = Date.now() + 10_000; ; await sleep(20)) {
      const { body } = await api().get('/events?limit=100').set('X-API-KEY', key).expect(200);
      if ((body as Event[]).length >= count || Date.now() > deadline) return body as Event[];
    }
  }

  /** The requests the receiver got at `path` once there are `count` of them. */
  async function received(path: string, count: number): Promise<ReceivedWebhook[]> {
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(20))
      if (suite.receiver.at(path).length >= count) break;
    return suite.receiver.at(path);
  }

  const recorded = async (companyId: string) =>
    (await pool().query<{ type: string }>('SELECT type FROM webhook_events WHERE company_id = $1', [companyId])).rows;

  /** A started webhook as a receiver reads it: verified, its type from the header and the signed body alike. */
  function expectStarted(request: ReceivedWebhook, secret: string, reportId: string): void {
    expect(verifies(request, secret)).to.equal(true);
    expect(request.headers['webhook-event-type']).to.equal('report.started');
    const body = JSON.parse(request.body) as { type: string; report: { id: string; status: string } };
    expect(body.type).to.equal('report.started');
    expect(body.report).to.include({ id: reportId, status: 'in_progress' });
  }

  it('sends a verified report.started webhook in the background when the application starts an API report', async () => {
    startWorker();
    const company = await subscribed(BOTH);
    const reportId = await apiReport(company.key);
    const res = await start(company.companyId, reportId).expect(200);
    expect(res.body.status).to.equal('in_progress');
    const [request, ...more] = await received(company.path, 1);
    expect(more).to.have.length(0);
    expectStarted(request!, company.secret, reportId);
    const eventId = String(request!.headers['webhook-id']);
    const event = await settled(company.key, eventId, 'delivered');
    expect(event).to.deep.include({ type: 'report.started', report: res.body });
    // Started again: it was already in progress, so nothing more is recorded or sent.
    await start(company.companyId, reportId).expect(200);
    expect(await recorded(company.companyId)).to.have.length(1);
  });

  it('sends it when an inspector starts the report in the console', async () => {
    startWorker();
    const company = await subscribed(BOTH);
    const reportId = await apiReport(company.key);
    const { cookie, csrf } = await signIn();
    const page = `/console/companies/${company.companyId}/reports/${reportId}`;
    await consoleClient()
      .post(`${page}/start`)
      .set('Cookie', cookie)
      .type('form')
      .send({ _csrf: csrf })
      .expect(303)
      .expect('Location', page);
    const [request] = await received(company.path, 1);
    expectStarted(request!, company.secret, reportId);
  });

  it('records nothing for the default choice (report.published), and still notifies the publish', async () => {
    startWorker();
    const company = await subscribed();
    const reportId = await apiReport(company.key);
    await start(company.companyId, reportId).expect(200);
    expect(await recorded(company.companyId)).to.deep.equal([]);
    const published = await publish(company, reportId, {
      publishedUrl: 'https://reports.example.com/r/1',
      notifyIntegration: true,
    }).expect(200);
    expect(published.body.webhook.outcome).to.equal('sent');
    const [request, ...more] = suite.receiver.at(company.path);
    expect(more).to.have.length(0);
    expect(request!.headers['webhook-event-type']).to.equal('report.published');
    expect(JSON.parse(request!.body)).to.deep.equal(published.body.report);
  });

  it('lists both types in the feed with their type, in the order they happened', async () => {
    startWorker();
    const company = await subscribed(BOTH);
    const reportId = await apiReport(company.key);
    const started = await start(company.companyId, reportId).expect(200);
    const published = await publish(company, reportId, {
      publishedUrl: 'https://reports.example.com/r/2',
      notifyIntegration: true,
    }).expect(200);
    const feed = await feedOf(company.key, 2);
    expect(feed.map((e) => e.type)).to.deep.equal(['report.started', 'report.published']);
    expect(feed[0]!.report).to.deep.equal(started.body);
    expect(feed[1]).to.deep.include({ id: published.body.webhook.eventId, report: published.body.report });
    const requests = await received(company.path, 2);
    expect(requests.map((r) => r.headers['webhook-event-type']).sort()).to.deep.equal(BOTH);
  });

  it('records no event for a report created in the application, nor once the integration is revoked', async () => {
    const company = await subscribed(BOTH);
    const own = await api()
      .post(`/internal/companies/${company.companyId}/reports`)
      .set(auth)
      .send(reportInput())
      .expect(201);
    await start(company.companyId, own.body.id).expect(200);
    const partners = await apiReport(company.key);
    await api().delete(`/internal/companies/${company.companyId}/integration`).set(auth).expect(204);
    await start(company.companyId, partners).expect(200);
    expect(await recorded(company.companyId)).to.deep.equal([]);
  });

  it('records the event for the feed (delivery none) when the integration has no address', async () => {
    const company = await subscribed(BOTH);
    await pool().query('UPDATE integrations SET webhook_url = NULL WHERE company_id = $1', [company.companyId]);
    const reportId = await apiReport(company.key);
    await start(company.companyId, reportId).expect(200);
    const [event] = await feedOf(company.key, 1);
    expect(event).to.deep.include({ type: 'report.started' });
    expect(event!.delivery).to.include({ status: 'none', attempts: 0 });
  });

  it('stops recording publishes for an integration that left report.published out', async () => {
    const company = await subscribed(['report.started']);
    const reportId = await apiReport(company.key);
    const res = await publish(company, reportId, {
      publishedUrl: 'https://reports.example.com/r/3',
      notifyIntegration: true,
    }).expect(200);
    expect(res.body.webhook).to.deep.equal({ outcome: 'not_sent', reason: 'not_subscribed' });
    expect(await recorded(company.companyId)).to.deep.equal([]);
  });

  it('does the same in the sandbox: its own choice, address and secret, its own feed', async () => {
    startWorker();
    const company = await withSandbox();
    const path = `/${company.companyId}-sandbox`;
    const set = await api()
      .put(`/internal/companies/${company.companyId}/sandbox/webhook`)
      .set(auth)
      .send({ url: suite.receiver.url(path), eventTypes: BOTH })
      .expect(200);
    const live = await api().get(`/internal/companies/${company.companyId}/integration`).set(auth).expect(200);
    expect(live.body.eventTypes).to.deep.equal(['report.published']);
    const reportId = await apiReport(company.testKey);
    await api().post(`/sandbox/reports/${reportId}/start`).set('X-API-KEY', company.testKey).expect(200);
    const [request] = await received(path, 1);
    expectStarted(request!, set.body.secret as string, reportId);
    const [event] = await feedOf(company.testKey, 1);
    expect(event).to.deep.include({ id: request!.headers['webhook-id'], type: 'report.started' });
    expect((await api().get('/events').set('X-API-KEY', company.key).expect(200)).body).to.deep.equal([]);
  });
});
