-- A sandbox holds at most 10,000 reports, exactly, however many processes create reports in it at once:
-- each sandbox keeps its count of reports, changed by the statements that add or remove its reports.
-- Adding them locks the sandbox's row until the commit, so concurrent creates in one sandbox are counted
-- one after the other, each against the count its predecessors committed; the check constraint refuses
-- the statement that would take it past the bound (src/reports/sandbox.ts names the constraint and the
-- bound, and test/integrations/sandbox.test.ts holds the two together). A write whose Idempotency-Key already
-- has an answer inserts nothing, so the bound never stands in front of a key's kept answer.
ALTER TABLE companies
  ADD COLUMN sandbox_reports integer NOT NULL DEFAULT 0,
  ADD CONSTRAINT companies_sandbox_room CHECK (sandbox_reports <= 10000);

UPDATE companies c
   SET sandbox_reports = (SELECT count(*) FROM reports r WHERE r.company_id = c.id)
 WHERE c.sandbox_of IS NOT NULL;

-- A live company's rows match no sandbox row: its statements take no lock here.
CREATE FUNCTION count_sandbox_reports() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE companies c SET sandbox_reports = c.sandbox_reports + n.reports
      FROM (SELECT company_id, count(*) AS reports FROM added GROUP BY company_id) n
     WHERE c.id = n.company_id AND c.sandbox_of IS NOT NULL;
  ELSE
    UPDATE companies c SET sandbox_reports = c.sandbox_reports - n.reports
      FROM (SELECT company_id, count(*) AS reports FROM removed GROUP BY company_id) n
     WHERE c.id = n.company_id AND c.sandbox_of IS NOT NULL;
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER reports_count_sandbox_added
  AFTER INSERT ON reports REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION count_sandbox_reports();

CREATE TRIGGER reports_count_sandbox_removed
  AFTER DELETE ON reports REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION count_sandbox_reports();

CREATE FUNCTION uncount_sandbox_reports() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE companies SET sandbox_reports = 0 WHERE sandbox_reports <> 0;
  RETURN NULL;
END;
$$;

CREATE TRIGGER reports_count_sandbox_truncated
  AFTER TRUNCATE ON reports
  FOR EACH STATEMENT EXECUTE FUNCTION uncount_sandbox_reports();
