-- How many bytes a report takes in a response's JSON, about, kept on its row so that a list page can
-- end within its byte budget by a running sum over the rows it scans, without building (or even
-- reading from TOAST) the reports past the budget. Generated: PostgreSQL keeps it right on every write.

-- The length of a value as JSON text (escapes included). Declared IMMUTABLE, as a generated column
-- needs: to_json is STABLE only because of other types' output functions; for text it depends on nothing.
CREATE FUNCTION json_bytes(value text) RETURNS integer
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN octet_length(to_json(value)::text);

CREATE FUNCTION json_bytes(value text[]) RETURNS integer
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN octet_length(to_json(value)::text);

-- The displayed text fields, each invoice item's ": $1,250.00" (at most 20 bytes more than its
-- description), and 450 bytes for the field names, the id, the dates and the status.
ALTER TABLE reports ADD COLUMN display_bytes integer GENERATED ALWAYS AS (
  450
  + json_bytes(address) + json_bytes(client_names) + json_bytes(client_emails) + json_bytes(client_phones)
  + json_bytes(agent_name) + json_bytes(agent_email) + json_bytes(agent_phone)
  + json_bytes(inspector_names) + json_bytes(inspector_emails) + json_bytes(notes)
  + json_bytes(from_rest_service) + json_bytes(coalesce(rest_id, '')) + json_bytes(published_url)
  + json_bytes(year_built) + json_bytes(square_feet)
  + json_bytes(invoice_descriptions) + 20 * cardinality(invoice_descriptions)
) STORED;
