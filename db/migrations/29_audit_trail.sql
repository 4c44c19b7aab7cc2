-- The audit trail: who did what to a company's integration, reports and people, when and from where
-- (src/audit). Append-only: no entry is ever changed (the trigger below refuses it); entries go only when
-- older than AUDIT_RETENTION (the sweep) or with their company.
CREATE TABLE audit_events (
  company_id     uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  -- The trail's order, and its cursor: newest first.
  id             bigint GENERATED ALWAYS AS IDENTITY,
  at             timestamptz NOT NULL DEFAULT clock_timestamp(),
  actor_type     text NOT NULL CHECK (actor_type IN ('person', 'operator', 'key')),
  -- The person's e-mail address, 'operator', or the key's prefix.
  actor          text NOT NULL,
  action         text NOT NULL,
  -- What the action was done to: a key's prefix, a report's id, an event's id, a person's e-mail; or ''.
  subject        text NOT NULL DEFAULT '',
  details        jsonb NOT NULL DEFAULT '{}',
  client_address text NOT NULL DEFAULT '',
  PRIMARY KEY (company_id, id)
);
-- The trail filtered by person or by action, newest first.
CREATE INDEX audit_events_by_actor ON audit_events (company_id, actor, id);
CREATE INDEX audit_events_by_action ON audit_events (company_id, action, id);
-- The sweep finds the oldest entries without reading the others.
CREATE INDEX audit_events_at ON audit_events (at);

CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the audit trail is append-only: an entry is never changed';
END $$;
CREATE TRIGGER audit_events_append_only BEFORE UPDATE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();
