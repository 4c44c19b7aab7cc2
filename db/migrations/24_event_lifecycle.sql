-- Each event belongs to the integration it was recorded for: an event of a revoked integration is never
-- sent, not even to the company's next integration (src/integrations/event-outcomes.ts has the rules).
ALTER TABLE webhook_events ADD COLUMN integration_id uuid;
UPDATE webhook_events e SET integration_id = r.integration_id
  FROM reports r WHERE r.company_id = e.company_id AND r.id = e.report_id;
-- An event whose report is gone (a sandbox wiped) belongs to its company's latest integration.
UPDATE webhook_events e
   SET integration_id = (SELECT i.id FROM integrations i WHERE i.company_id = e.company_id
                          ORDER BY i.revoked_at IS NULL DESC, i.created_at DESC LIMIT 1)
 WHERE e.integration_id IS NULL;
ALTER TABLE webhook_events
  ALTER COLUMN integration_id SET NOT NULL,
  ADD FOREIGN KEY (company_id, integration_id) REFERENCES integrations (company_id, id) ON DELETE CASCADE,
  -- The attempt holding the event (with leased_until): only its settle may settle the event, and the lease
  -- is renewed as the request starts, so one webhook-id is never in flight twice.
  ADD COLUMN lease uuid,
  -- The attempt holding the lease was asked for by hand; `redelivery` now means one is asked and not yet taken.
  ADD COLUMN leased_redelivery boolean NOT NULL DEFAULT false,
  -- A pending event redelivered: when its schedule resumes should the redelivery fail.
  ADD COLUMN resume_at timestamptz;

ALTER TABLE integrations
  -- Counts the addresses set: an attempt's outcome counts only for the address it was sent to.
  ADD COLUMN webhook_generation integer NOT NULL DEFAULT 1,
  -- The latest failed attempt: a run of failures ends once nothing has failed for the schedule's last wait.
  ADD COLUMN webhook_last_failure_at timestamptz,
  -- A receiver's Retry-After pauses every attempt to the address until then, not one event's.
  ADD COLUMN webhook_paused_until timestamptz;

-- The delivery log is swept with the events: its oldest attempts are found without reading the others.
CREATE INDEX webhook_deliveries_attempted ON webhook_deliveries (attempted_at);
