-- Webhook delivery log: every attempt to notify a company's integration when a report is published.
-- Carries company_id in its key like every table (see 1_core.sql).
CREATE TABLE webhook_deliveries (
  company_id       uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  id               uuid NOT NULL DEFAULT gen_random_uuid(),
  report_id        uuid NOT NULL,
  webhook_id       text NOT NULL,
  url              text NOT NULL,
  attempted_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  duration_ms      integer NOT NULL,
  http_status      integer,
  error            text NOT NULL DEFAULT '',
  response_excerpt text NOT NULL DEFAULT '',
  PRIMARY KEY (company_id, id),
  FOREIGN KEY (company_id, report_id) REFERENCES reports (company_id, id) ON DELETE CASCADE
);
-- Serves the delivery log, newest first.
CREATE INDEX webhook_deliveries_log_order ON webhook_deliveries (company_id, attempted_at DESC, id DESC);

-- The webhook-id of a publish that failed, reused when the inspector retries so receivers can
-- de-duplicate; cleared when a publish succeeds, so a later re-publish gets a new one.
ALTER TABLE reports ADD COLUMN pending_webhook_id text;
