-- display_bytes (migration 9) kept by a BEFORE trigger instead of as a generated column. For a
-- generated column PostgreSQL rebuilds the expression (fifteen json_bytes terms, each inlined) for
-- every statement that writes reports: as much time as the rest of a statement writing a few reports.
-- The trigger's call is planned once per connection, with report_display_bytes inlined into it. The
-- stored values stay (DROP EXPRESSION keeps them) and are what the same terms give. Both functions are
-- derived from the field catalogue (src/reports/display-bytes.ts, copied by `npm run gen` into
-- generated/report-display-bytes.sql); test/reports/field-catalogue-table.test.ts holds them together.
CREATE FUNCTION report_display_bytes(address text, client_names text[], client_emails text[], client_phones text[], agent_name text, agent_email text, agent_phone text, inspector_names text[], inspector_emails text[], notes text, from_rest_service text, rest_id text, published_url text, year_built text, square_feet text, invoice_descriptions text[], invoice_prices bigint[]) RETURNS integer
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN 450
    + json_bytes(address)
    + json_bytes(client_names)
    + json_bytes(client_emails)
    + json_bytes(client_phones)
    + json_bytes(agent_name)
    + json_bytes(agent_email)
    + json_bytes(agent_phone)
    + json_bytes(inspector_names) + json_bytes(inspector_emails)
    + json_bytes(notes)
    + json_bytes(from_rest_service)
    + json_bytes(coalesce(rest_id, ''))
    + json_bytes(published_url)
    + json_bytes(year_built)
    + json_bytes(square_feet)
    + json_bytes(invoice_descriptions) + 20 * cardinality(invoice_descriptions);

CREATE FUNCTION set_report_display_bytes() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  NEW.display_bytes := report_display_bytes(NEW.address, NEW.client_names, NEW.client_emails, NEW.client_phones, NEW.agent_name, NEW.agent_email, NEW.agent_phone, NEW.inspector_names, NEW.inspector_emails, NEW.notes, NEW.from_rest_service, NEW.rest_id, NEW.published_url, NEW.year_built, NEW.square_feet, NEW.invoice_descriptions, NEW.invoice_prices);
  RETURN NEW;
END
$$;

ALTER TABLE reports ALTER COLUMN display_bytes DROP EXPRESSION;
CREATE TRIGGER reports_display_bytes BEFORE INSERT OR UPDATE ON reports
  FOR EACH ROW EXECUTE FUNCTION set_report_display_bytes();
