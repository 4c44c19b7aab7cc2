import type { EventType } from '../../api-types.js';
import type { Queryable } from '../../db/pool.js';

/** A due event a take has leased for one attempt. */
export interface Due {
  companyId: string;
  id: string;
  reportId: string;
  integrationId: string;
  type: EventType;
  /** The event's report (JSON), which the type makes the body of (event-types.ts). */
  payload: string;
  /** The lease this attempt holds: only it may settle the event. */
  lease: string;
}

export interface Take {
  /** Delivery slots free in this process. */
  free: number;
  /** Slots one company may hold. */
  share: number;
  /** The slots each company holds now (FailingAddresses.busy). */
  busy: [string, number][];
  /** The companies failing now, and how many slots they may take together (FailingAddresses.room). */
  failing: { companies: string[]; free: number };
  leaseMs: number;
}

/**
 * Leases up to `free` due events, round by round across companies, each within its share of slots (the
 * companies failing now last, within their part). Companies are found by skipping along the index
 * (migration 19) and each one's events read only up to its share, so a backlog costs only what is taken.
 * Due means by now(), which bounds the index range (clock_timestamp() would be compared row by row).
 */
export async function takeDueEvents(db: Queryable, take: Take): Promise<Due[]> {
  const { rows } = await db.query<Due>(
    `WITH RECURSIVE companies AS (
     (SELECT company_id FROM webhook_events WHERE status = 'pending' ORDER BY company_id LIMIT 1)
     UNION ALL
     SELECT (SELECT e.company_id FROM webhook_events e
              WHERE e.status = 'pending' AND e.company_id > c.company_id ORDER BY e.company_id LIMIT 1)
       FROM companies c WHERE c.company_id IS NOT NULL
   ), due AS (
     SELECT d.company_id, d.id, d.n, d.next_attempt_at, c.company_id = ANY($6::uuid[]) AS failing FROM companies c
      CROSS JOIN LATERAL (
        SELECT e.company_id, e.id, e.next_attempt_at,
               row_number() OVER (ORDER BY e.next_attempt_at, e.feed_seq) AS n
          FROM webhook_events e
         WHERE e.company_id = c.company_id AND e.status = 'pending' AND e.next_attempt_at <= now()
           AND (e.leased_until IS NULL OR e.leased_until < clock_timestamp())
         ORDER BY e.next_attempt_at, e.feed_seq
         LIMIT greatest(0, $2 - coalesce((SELECT b.n FROM unnest($3::uuid[], $4::int[]) AS b(company_id, n)
                                          WHERE b.company_id = c.company_id), 0))
      ) d
      -- A receiver's Retry-After holds back every event of its address.
      WHERE NOT EXISTS (SELECT FROM integrations i WHERE i.company_id = c.company_id AND i.revoked_at IS NULL
                                                    AND i.webhook_paused_until > now())
   ), picked AS (
     -- A failing company has one event here at most (FailingAddresses.busy): k counts failing companies.
     SELECT r.company_id, r.id FROM (
       SELECT due.*, row_number() OVER (PARTITION BY failing ORDER BY n, next_attempt_at) AS k FROM due
     ) r
      WHERE NOT r.failing OR r.k <= $7
      ORDER BY r.failing, r.n, r.next_attempt_at
      LIMIT $1
   ), locked AS (
     -- Rows another transaction holds (a revocation cancelling them, a settlement) are left to a
     -- later take: the take never waits, so it is never part of a cycle of waits.
     SELECT e.company_id, e.id FROM webhook_events e JOIN picked p ON p.company_id = e.company_id AND p.id = e.id
        FOR UPDATE OF e SKIP LOCKED
   )
   UPDATE webhook_events e
      SET lease = gen_random_uuid(), leased_until = clock_timestamp() + $5 * interval '1 millisecond',
          leased_redelivery = e.redelivery, redelivery = false
     FROM locked p
    WHERE e.company_id = p.company_id AND e.id = p.id AND e.status = 'pending'
      AND (e.leased_until IS NULL OR e.leased_until < clock_timestamp())
   RETURNING e.company_id AS "companyId", e.id, e.report_id AS "reportId",
             e.integration_id AS "integrationId", e.type, e.payload, e.lease`,
    [
      take.free,
      take.share,
      take.busy.map(([c]) => c),
      take.busy.map(([, n]) => n),
      take.leaseMs,
      take.failing.companies,
      take.failing.free,
    ],
  );
  return rows;
}
