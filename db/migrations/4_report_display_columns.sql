-- A report's inspectors and invoice items as its outputs show them, kept on the report row itself so
-- that a read is one index probe and a list page one index range scan (no per-report lookups in
-- report_inspectors, users and report_invoice_items). The child tables stay the record: the order,
-- the references to users and the prices in cents. The store writes both in the same statement, and
-- users are never renamed, so the copies cannot drift.
ALTER TABLE reports
  ADD COLUMN inspector_names      text[] NOT NULL DEFAULT '{}',
  ADD COLUMN inspector_emails     text[] NOT NULL DEFAULT '{}',
  ADD COLUMN invoice_descriptions text[] NOT NULL DEFAULT '{}',
  ADD COLUMN invoice_prices       bigint[] NOT NULL DEFAULT '{}';

UPDATE reports r
   SET inspector_names = i.names, inspector_emails = i.emails
  FROM (SELECT ri.company_id, ri.report_id,
               array_agg(u.name ORDER BY ri.position) AS names, array_agg(u.email ORDER BY ri.position) AS emails
          FROM report_inspectors ri
          JOIN users u ON u.company_id = ri.company_id AND u.id = ri.user_id
         GROUP BY ri.company_id, ri.report_id) i
 WHERE r.company_id = i.company_id AND r.id = i.report_id;

UPDATE reports r
   SET invoice_descriptions = v.descriptions, invoice_prices = v.prices
  FROM (SELECT company_id, report_id,
               array_agg(description ORDER BY position) AS descriptions, array_agg(price_cents ORDER BY position) AS prices
          FROM report_invoice_items
         GROUP BY company_id, report_id) v
 WHERE r.company_id = v.company_id AND r.id = v.report_id;
