-- The sandbox (issue 23): each company's sandbox is a company row of its own, `sandbox_of` the company
-- it belongs to, so that everything kept per company (reports and their restIds, caches, the webhook's
-- address and secret, the delivery log) is kept apart between the two worlds by the same rules that keep
-- companies apart. Its test keys are its own keys; its reports never show in the company's.
ALTER TABLE companies ADD COLUMN sandbox_of uuid UNIQUE REFERENCES companies ON DELETE CASCADE;

-- A sandbox is wiped and its old reports expire, which deletes many reports at once: the caches are told
-- which companies' reports went ("<company id> *"), not to forget every company's (migration 10's '*',
-- kept for a truncate).
CREATE FUNCTION notify_reports_removed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('report_changed', c.company_id::text || ' *') FROM (SELECT DISTINCT company_id FROM removed) c;
  RETURN NULL;
END;
$$;

DROP TRIGGER reports_notify_removed ON reports;

CREATE TRIGGER reports_notify_deleted
  AFTER DELETE ON reports REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION notify_reports_removed();

CREATE TRIGGER reports_notify_truncated
  AFTER TRUNCATE ON reports
  FOR EACH STATEMENT EXECUTE FUNCTION notify_report_changed();
