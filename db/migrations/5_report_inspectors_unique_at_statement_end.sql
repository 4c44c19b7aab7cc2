-- A report's inspectors are replaced in the same statement that writes the report: rows are updated
-- in place by position and the surplus deleted, so reordering [A, B] to [B, A] passes through a
-- moment where one user is at two positions. A DEFERRABLE constraint is checked at the end of the
-- statement instead of row by row (INITIALLY IMMEDIATE: still within the statement, never later).
ALTER TABLE report_inspectors
  DROP CONSTRAINT report_inspectors_company_id_report_id_user_id_key,
  ADD CONSTRAINT report_inspectors_company_id_report_id_user_id_key
    UNIQUE (company_id, report_id, user_id) DEFERRABLE INITIALLY IMMEDIATE;
