import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { sweepOldEvents } from '../../src/integrations/events/event-batches.js';
import { placeEvents } from '../../src/integrations/events/feed-positions.js';
import { api, newCompany, pool } from '../support/harness.js';
import { eventsSuite, type Event } from '../support/events.js';

/**
 * The feed's `after` through HTTP against PostgreSQL: a cursor the retention sweep made old never leaves a
 * poller failing.
 */

const RETENTION_MS = 30 * 86_400_000;

describe('the events feed: where a poller resumes', () => {
  const { publish, apiReport } = eventsSuite();

  async function publishedEvents(company: { companyId: string; key: string }, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const res = await publish(company, await apiReport(company.key), {
        publishedUrl: 'https://r.example.com/1',
        notifyIntegration: true,
      }).expect(200);
      ids.push(res.body.webhook.eventId as string);
    }
    return ids;
  }

  /** The ids the feed lists after `after` once it lists `count` events (others' transactions hold it back a moment). */
  async function feedAfter(key: string, after: string | undefined, count: number): Promise<string[]> {
    const path = `/events?limit=100${after ? `&after=${after}` : ''}`;
    for (const deadline = Date.now() + 10_000; ; await sleep(20)) {
      const { body } = await api().get(path).set('X-API-KEY', key).expect(200);
      const ids = (body as Event[]).map((e) => e.id);
      if (ids.length >= count || Date.now() > deadline) return ids;
    }
  }

  /** Makes the company's own events older than the retention (only this test's company is touched). */
  const backdate = (companyId: string, ids: string[]) =>
    pool().query(
      "UPDATE webhook_events SET created_at = clock_timestamp() - interval '31 days' WHERE company_id = $1 AND id = ANY($2)",
      [companyId, ids],
    );

  it('keeps a company’s last event past EVENT_RETENTION, so a caught-up poller’s after still answers', async () => {
    const company = await newCompany();
    const ids = await publishedEvents(company, 2);
    expect(await feedAfter(company.key, undefined, 2)).to.deep.equal(ids);
    await backdate(company.companyId, ids);
    await placeEvents(pool());
    await sweepOldEvents(pool(), RETENTION_MS);
    await api().get(`/events/${ids[0]}`).set('X-API-KEY', company.key).expect(404);
    await api().get(`/events/${ids[1]}`).set('X-API-KEY', company.key).expect(200);
    const caughtUp = await api().get(`/events?after=${ids[1]}`).set('X-API-KEY', company.key).expect(200);
    expect(caughtUp.body).to.deep.equal([]);
    const [next] = await publishedEvents(company, 1);
    expect(await feedAfter(company.key, ids[1], 1)).to.deep.equal([next]);
  });

  it('never forgets an event still to be attempted, however old', async () => {
    const company = await newCompany();
    const ids = await publishedEvents(company, 3);
    await backdate(company.companyId, ids);
    // The first is pending: its next attempt is tomorrow, so no worker of a parallel test takes it.
    await pool().query(
      "UPDATE webhook_events SET status = 'pending', next_attempt_at = clock_timestamp() + interval '1 day' WHERE company_id = $1 AND id = $2",
      [company.companyId, ids[0]],
    );
    await placeEvents(pool());
    await sweepOldEvents(pool(), RETENTION_MS);
    const kept = await api().get(`/events/${ids[0]}`).set('X-API-KEY', company.key).expect(200);
    expect(kept.body.delivery.status).to.equal('pending');
    await api().get(`/events/${ids[1]}`).set('X-API-KEY', company.key).expect(404);
    await api().get(`/events/${ids[2]}`).set('X-API-KEY', company.key).expect(200);
  });
});
