import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { sweepOldEvents } from '../../src/integrations/events/event-batches.js';
import { placeEvents } from '../../src/integrations/events/feed-positions.js';
import pg from 'pg';
import { api, databaseUrl, newCompany, newTestKey, pool, unique } from '../support/harness.js';
import { eventsSuite, type Event } from '../support/events.js';
import { auth, companyWithWebhook, type CompanyWithWebhook } from '../support/webhooks.js';

/**
 * Durable deliveries through HTTP against PostgreSQL and a real local HTTPS receiver: events recorded
 * with publishes, attempts made again in the background on a short schedule, the feed, redelivery.
 * The background worker runs in this process, on the suite's notifier (which trusts the receiver).
 */

describe('durable deliveries: events, the feed and redelivery', () => {
  const { suite, startWorker, publish, apiReport, retrying, settled } = eventsSuite();

  /**
   * The company's feed once it shows `count` events: an event shows once every transaction older than
   * its own is over, and other tests' transactions run at the same time.
   */
  async function feedOf(key: string, count: number): Promise<Event[]> {
    for (const deadline = Date.now() + 10_000; ; await sleep(20)) {
      const { body } = await api().get('/events?limit=100').set('X-API-KEY', key).expect(200);
      if ((body as Event[]).length >= count || Date.now() > deadline) return body as Event[];
    }
  }

  /** The company's events, as recorded (shown in the feed or not yet). */
  const recorded = async (companyId: string) =>
    (await pool().query('SELECT id FROM webhook_events WHERE company_id = $1', [companyId])).rowCount;

  describe('publishing with whenDeliveryFails', () => {
    it('keeps "fail" as it was: 502, the report unchanged, no event', async () => {
      const company = await companyWithWebhook(suite.receiver);
      suite.receiver.on(company.path, { status: 500 });
      const id = await apiReport(company.key);
      await publish(company, id, { ...retrying, whenDeliveryFails: 'fail' }).expect(502);
      expect(await recorded(company.companyId)).to.equal(0);
    });

    it('refuses any other value with 400 naming the field, publishing nothing', async () => {
      const company = await companyWithWebhook(suite.receiver);
      const id = await apiReport(company.key);
      const res = await publish(company, id, { ...retrying, whenDeliveryFails: 'later' }).expect(400);
      expect(res.body.error).to.match(/^whenDeliveryFails /);
      expect(suite.receiver.at(company.path)).to.have.length(0);
      const { body } = await api().get(`/reports/${id}`).set('X-API-KEY', company.key).expect(200);
      expect(body.status).to.equal('new');
    });

    it('records an event with delivery none when no address is set, for the feed', async () => {
      const company = await newCompany();
      const id = await apiReport(company.key);
      const res = await publish(company, id, {
        publishedUrl: 'https://r.example.com/1',
        notifyIntegration: true,
      }).expect(200);
      const [only, ...more] = await feedOf(company.key, 1);
      expect(more).to.have.length(0);
      expect(only!.id).to.equal(res.body.webhook.eventId);
      expect(only).to.deep.include({ type: 'report.published' });
      expect(only!.delivery).to.deep.equal({
        status: 'none',
        attempts: 0,
        lastAttemptAt: null,
        nextAttemptAt: null,
        lastError: '',
      });
      expect(only!.report).to.deep.equal(res.body.report);
    });

    it('records no event for a publish that does not notify', async () => {
      const company = await companyWithWebhook(suite.receiver);
      await publish(company, await apiReport(company.key), { ...retrying, notifyIntegration: false }).expect(200);
      expect(await recorded(company.companyId)).to.equal(0);
    });
  });

  describe('the feed', () => {
    async function publishedEvents(company: CompanyWithWebhook, count: number): Promise<string[]> {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const res = await publish(company, await apiReport(company.key), retrying).expect(200);
        ids.push(res.body.webhook.eventId as string);
      }
      return ids;
    }

    it('lists events oldest first, page by page with Link, after an event of yours only', async () => {
      const company = await companyWithWebhook(suite.receiver);
      const ids = await publishedEvents(company, 5);
      expect(await feedOf(company.key, 5)).to.have.length(5);
      const seen: string[] = [];
      let next: string | undefined = '/events?limit=2';
      while (next) {
        const res: { body: Event[]; headers: Record<string, string> } = await api()
          .get(next)
          .set('X-API-KEY', company.key)
          .expect(200);
        seen.push(...(res.body as Event[]).map((e) => e.id));
        next = /<([^>]+)>; rel="next"/.exec(res.headers.link ?? '')?.[1];
      }
      expect(seen).to.deep.equal(ids);
      const after = await api().get(`/events?after=${ids[2]}`).set('X-API-KEY', company.key).expect(200);
      expect(after.body.map((e: Event) => e.id)).to.deep.equal(ids.slice(3));
      const other = await newCompany();
      const refused = await api().get(`/events?after=${ids[0]}`).set('X-API-KEY', other.key).expect(400);
      expect(refused.body.error).to.equal(`after is not the id of one of your events: ${ids[0]}`);
      await api().get('/events?limit=0').set('X-API-KEY', company.key).expect(400);
      await api().get('/events?limit=101').set('X-API-KEY', company.key).expect(400);
    });

    it('shows an event once it has committed: a transaction left open elsewhere holds back only its own', async () => {
      const company = await newCompany();
      const reportId = await apiReport(company.key);
      const { body: report } = await api().get(`/reports/${reportId}`).set('X-API-KEY', company.key).expect(200);
      const slow = new pg.Client({ connectionString: databaseUrl() });
      const idle = new pg.Client({ connectionString: databaseUrl() });
      await Promise.all([slow.connect(), idle.connect()]);
      try {
        // A session left idle in a transaction that has written (as a forgotten psql session), and a
        // publish's transaction that recorded its event and has not committed yet.
        await idle.query('BEGIN');
        await idle.query('SELECT pg_current_xact_id()');
        await slow.query('BEGIN');
        const earlier = unique('msg_slow');
        await slow.query(
          `INSERT INTO webhook_events (company_id, id, report_id, integration_id, payload, status)
           SELECT $1, $2, $3, id, $4, 'none' FROM integrations WHERE company_id = $1 AND revoked_at IS NULL`,
          [company.companyId, earlier, reportId, JSON.stringify(report)],
        );
        const later = await publish(company, await apiReport(company.key), {
          publishedUrl: 'https://r.example.com/1',
          notifyIntegration: true,
        }).expect(200);
        const laterId = later.body.webhook.eventId as string;
        // Shown at once, though both transactions are still open.
        expect((await feedOf(company.key, 1)).map((e) => e.id)).to.deep.equal([laterId]);
        await slow.query('COMMIT');
        // The earlier event joins the feed after it, so a poller that has read up to it still gets it, once.
        await placeEvents(pool());
        const next = await api().get(`/events?after=${laterId}`).set('X-API-KEY', company.key).expect(200);
        expect(next.body.map((e: Event) => e.id)).to.deep.equal([earlier]);
        expect((await feedOf(company.key, 2)).map((e) => e.id)).to.deep.equal([laterId, earlier]);
      } finally {
        await idle.query('ROLLBACK').catch(() => undefined);
        await Promise.all([slow.end(), idle.end()]);
      }
    });

    it('forgets events past EVENT_RETENTION, and no younger one', async () => {
      const company = await newCompany();
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const res = await publish(company, await apiReport(company.key), {
          publishedUrl: 'https://r.example.com/1',
          notifyIntegration: true,
        }).expect(200);
        ids.push(res.body.webhook.eventId as string);
      }
      await pool().query(
        "UPDATE webhook_events SET created_at = clock_timestamp() - interval '31 days' WHERE company_id = $1 AND id = $2",
        [company.companyId, ids[0]],
      );
      // The sweep keeps a company's last event in the feed: the feed holds both by now.
      await placeEvents(pool());
      expect(await sweepOldEvents(pool(), 30 * 86_400_000)).to.be.at.least(1);
      await api().get(`/events/${ids[0]}`).set('X-API-KEY', company.key).expect(404);
      expect((await feedOf(company.key, 1)).map((e) => e.id)).to.deep.equal([ids[1]]);
    });

    it("answers 404 alike for another company's event, the other world's, an unknown id or one that does not percent-decode", async () => {
      const company = await companyWithWebhook(suite.receiver);
      const [id] = await publishedEvents(company, 1);
      await api().get(`/events/${id}`).set('X-API-KEY', company.key).expect(200);
      const other = await newCompany();
      const { key: testKey } = await newTestKey(company.companyId);
      for (const key of [other.key, testKey]) {
        await api()
          .get(`/events/${id}`)
          .set('X-API-KEY', key)
          .expect(404, { error: `event ${id} not found` });
        await api().post(`/events/${id}/redeliver`).set('X-API-KEY', key).expect(404);
      }
      expect((await api().get('/events').set('X-API-KEY', testKey).expect(200)).body).to.deep.equal([]);
      await api().get('/events/msg_unknown').set('X-API-KEY', company.key).expect(404);
      await api()
        .get('/events/%E0%A4%A')
        .set('X-API-KEY', company.key)
        .expect(404, { error: 'event %E0%A4%A not found' });
      await api()
        .post('/events/%E0%A4%A/redeliver')
        .set('X-API-KEY', company.key)
        .expect(404, { error: 'event %E0%A4%A not found' });
    });

    it("lists the company's live events in the application as the partner's feed does", async () => {
      const company = await companyWithWebhook(suite.receiver);
      const ids = await publishedEvents(company, 3);
      expect(await feedOf(company.key, 3)).to.have.length(3);
      const res = await api().get(`/internal/companies/${company.companyId}/events?limit=2`).set(auth).expect(200);
      expect(res.body.map((e: Event) => e.id)).to.deep.equal(ids.slice(0, 2));
      expect(res.headers.link).to.equal(
        `</internal/companies/${company.companyId}/events?limit=2&after=${ids[1]}>; rel="next"`,
      );
    });
  });

  describe('redelivery and recovery', () => {
    it('redelivers any event now, as a new attempt, and 409 while no address can take it', async () => {
      startWorker();
      const company = await companyWithWebhook(suite.receiver);
      suite.receiver.on(company.path, { status: 204 });
      const res = await publish(company, await apiReport(company.key), retrying).expect(200);
      expect(res.body.webhook.outcome).to.equal('sent');
      const eventId = res.body.webhook.eventId as string;
      const queued = await api().post(`/events/${eventId}/redeliver`).set('X-API-KEY', company.key).expect(202);
      expect(queued.body.delivery.status).to.equal('pending');
      const again = await settled(company.key, eventId, 'delivered');
      expect(again.delivery.attempts).to.equal(2);
      expect(suite.receiver.at(company.path).map((r) => r.headers['webhook-id'])).to.deep.equal([eventId, eventId]);
      // A failed redelivery settles the event as failed: no schedule follows it.
      suite.receiver.on(company.path, { status: 500 });
      await api().post(`/internal/companies/${company.companyId}/events/${eventId}/redeliver`).set(auth).expect(202);
      const failed = await settled(company.key, eventId, 'failed');
      expect(failed.delivery).to.include({ attempts: 3, lastError: 'the receiver answered HTTP 500' });
      // No address: nothing queued.
      const bare = await newCompany();
      const none = await publish(bare, await apiReport(bare.key), retrying).expect(200);
      const refused = await api()
        .post(`/events/${none.body.webhook.eventId}/redeliver`)
        .set('X-API-KEY', bare.key)
        .expect(409);
      expect(refused.body.error).to.equal('no webhook address is set: set one, then redeliver');
    });

    it('recovers every failed event since a moment, and refuses a bad since', async () => {
      startWorker();
      const company = await companyWithWebhook(suite.receiver);
      suite.receiver.on(company.path, { status: 500 });
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const res = await publish(company, await apiReport(company.key), retrying).expect(200);
        ids.push(res.body.webhook.eventId as string);
      }
      for (const id of ids) await settled(company.key, id, 'failed');
      suite.receiver.on(company.path, { status: 204 });
      const recover = (since: string) =>
        api().post(`/internal/companies/${company.companyId}/events/redeliver`).set(auth).send({ since });
      const bad = await recover('yesterday').expect(400);
      expect(bad.body.error).to.match(/^since /);
      const later = await recover(new Date(Date.now() + 60_000).toISOString()).expect(202);
      expect(later.body).to.deep.equal({ queued: 0 });
      const all = await recover(new Date(Date.now() - 60_000).toISOString()).expect(202);
      expect(all.body).to.deep.equal({ queued: 2 });
      for (const id of ids) await settled(company.key, id, 'delivered');
    });
  });
});
