-- The feed's order: a position given to each event after its transaction has committed, by one placer at
-- a time (src/integrations/feed-positions.ts), in the order the placer finds them. A reader following the
-- positions never misses an event, and a transaction left open anywhere in the cluster holds back only its
-- own events (the previous rule, transactions older than every one still running, waited for all of them).
CREATE SEQUENCE webhook_events_feed_position;
ALTER TABLE webhook_events ADD COLUMN feed_position bigint;
-- The events already shown keep their order.
UPDATE webhook_events e SET feed_position = o.n
  FROM (SELECT company_id, id, row_number() OVER (ORDER BY feed_xid, feed_seq) AS n FROM webhook_events) o
 WHERE o.company_id = e.company_id AND o.id = e.id;
SELECT setval('webhook_events_feed_position', coalesce((SELECT max(feed_position) FROM webhook_events), 0) + 1, false);
CREATE UNIQUE INDEX webhook_events_feed ON webhook_events (company_id, feed_position);
-- The events still to be placed, in the order they were recorded.
CREATE INDEX webhook_events_unplaced ON webhook_events (feed_seq) WHERE feed_position IS NULL;
DROP INDEX webhook_events_feed_order;
ALTER TABLE webhook_events DROP COLUMN feed_xid;

-- An attempt made while the inspector waits (a publish's own): the event exists from the moment it is
-- sent, readable by its webhook-id, and is placed in the feed once the publish records the outcome.
ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_status_check;
ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_status_check
  CHECK (status IN ('sending', 'pending', 'delivered', 'failed', 'cancelled', 'none'));
