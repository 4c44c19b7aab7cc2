-- Durable deliveries: every webhook that is due is an event, recorded in the commit that publishes its
-- report, and kept until it is delivered, fails for good or is cancelled. The table is the queue too:
-- a process takes a due event by setting its lease in one statement, so any number of processes (and
-- PgBouncer in transaction mode: no session state, no LISTEN) share the attempts, each made by one.
CREATE TABLE webhook_events (
  company_id      uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  -- The webhook-id every attempt of the event sends.
  id              text NOT NULL,
  report_id       uuid NOT NULL,
  -- The report as published: the body of every attempt.
  payload         text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- The place in the feed: the inserting transaction, then the order within it. Only events of
  -- transactions older than every transaction still running are shown, so no event can later appear
  -- before one already shown (see src/integrations/events.ts).
  feed_xid        xid8 NOT NULL DEFAULT pg_current_xact_id(),
  feed_seq        bigserial NOT NULL,
  status          text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'cancelled', 'none')),
  attempts        integer NOT NULL DEFAULT 0,
  -- Failed attempts of the schedule so far: the next wait is the schedule's entry at this place.
  failures        integer NOT NULL DEFAULT 0,
  last_attempt_at timestamptz,
  next_attempt_at timestamptz,
  last_error      text NOT NULL DEFAULT '',
  -- A process making an attempt holds the event until then; past it (the process died), another may.
  leased_until    timestamptz,
  -- One attempt asked for by hand (redelivery, recovery): once made, the event is settled by its outcome.
  redelivery      boolean NOT NULL DEFAULT false,
  PRIMARY KEY (company_id, id),
  CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
CREATE UNIQUE INDEX webhook_events_feed_order ON webhook_events (company_id, feed_xid, feed_seq);
CREATE INDEX webhook_events_due ON webhook_events (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_events_created ON webhook_events (created_at);

-- An address is disabled after a 410 or after failing without a break for WEBHOOK_DISABLE_AFTER:
-- failing_since is the first failure of the current run of failures.
ALTER TABLE integrations
  ADD COLUMN webhook_failing_since timestamptz,
  ADD COLUMN webhook_disabled_reason text NOT NULL DEFAULT '';

-- Each attempt of the delivery log is the nth of its event.
ALTER TABLE webhook_deliveries ADD COLUMN attempt integer NOT NULL DEFAULT 1;
CREATE INDEX webhook_deliveries_by_webhook_id ON webhook_deliveries (company_id, webhook_id);

-- The log keeps an attempt whose report is gone (a sandbox wiped while its events were still
-- delivered): it is the record of what was sent, deleted with its company only.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_company_id_report_id_fkey;
