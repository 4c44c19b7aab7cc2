-- Server processes cache reports and list pages (src/store/report-cache.ts), so the database itself
-- announces every write of a report on channel report_changed, delivered to every listening process
-- when the transaction commits: the payload is "<company id> <report id>" for a row inserted or
-- updated, and '*' ("forget every report") for a delete or a truncate, which are rare (a company's
-- removal) and may touch many rows at once, so they notify once per statement.
CREATE FUNCTION notify_report_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_LEVEL = 'STATEMENT' THEN
    PERFORM pg_notify('report_changed', '*');
  ELSE
    PERFORM pg_notify('report_changed', NEW.company_id::text || ' ' || NEW.id::text);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER reports_notify_changed
  AFTER INSERT OR UPDATE ON reports
  FOR EACH ROW EXECUTE FUNCTION notify_report_changed();

CREATE TRIGGER reports_notify_removed
  AFTER DELETE OR TRUNCATE ON reports
  FOR EACH STATEMENT EXECUTE FUNCTION notify_report_changed();
