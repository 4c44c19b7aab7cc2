-- Core schema: companies, their users (inspectors), the REST API integration with its keys, and reports.
-- Every table carries company_id in its primary key so that it could later be distributed by company.

CREATE TABLE companies (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name       text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE users (
  company_id uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  id         uuid NOT NULL DEFAULT gen_random_uuid(),
  name       text NOT NULL,
  email      text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (company_id, id)
);
-- inspectorEmails match users case-insensitively; an address exists once per company.
CREATE UNIQUE INDEX users_company_email_key ON users (company_id, lower(email));

-- One REST API integration is active per company at a time. "Revoke REST API Integration" ends it
-- (revoked_at): its keys and webhook address go, and reports created under it never notify again,
-- even after a new integration is set up.
CREATE TABLE integrations (
  company_id     uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  id             uuid NOT NULL DEFAULT gen_random_uuid(),
  webhook_url    text,
  webhook_secret text,
  created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  revoked_at     timestamptz,
  PRIMARY KEY (company_id, id)
);
CREATE UNIQUE INDEX integrations_one_active ON integrations (company_id) WHERE revoked_at IS NULL;

-- Only the SHA-256 of a key is stored; a request's key is found by hashing it.
CREATE TABLE api_keys (
  company_id     uuid NOT NULL,
  id             uuid NOT NULL DEFAULT gen_random_uuid(),
  integration_id uuid NOT NULL,
  key_hash       bytea NOT NULL,
  prefix         text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  last_used_at   timestamptz,
  PRIMARY KEY (company_id, id),
  FOREIGN KEY (company_id, integration_id) REFERENCES integrations (company_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX api_keys_key_hash_key ON api_keys (key_hash);

CREATE TABLE reports (
  company_id        uuid NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
  id                uuid NOT NULL DEFAULT gen_random_uuid(),
  rest_id           text,
  -- The integration whose key created the report; NULL for reports created in the application.
  integration_id    uuid,
  from_rest_service text NOT NULL DEFAULT '',
  status            text NOT NULL DEFAULT 'new' CHECK (status IN ('new', 'in_progress', 'published')),
  client_names      text[] NOT NULL,
  client_emails     text[] NOT NULL DEFAULT '{}',
  client_phones     text[] NOT NULL DEFAULT '{}',
  inspection_date   date NOT NULL,
  address           text NOT NULL DEFAULT '',
  year_built        text NOT NULL DEFAULT '',
  square_feet       text NOT NULL DEFAULT '',
  notes             text NOT NULL DEFAULT '',
  agent_name        text NOT NULL DEFAULT '',
  agent_email       text NOT NULL DEFAULT '',
  agent_phone       text NOT NULL DEFAULT '',
  published_url     text NOT NULL DEFAULT '',
  created_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (company_id, id),
  FOREIGN KEY (company_id, integration_id) REFERENCES integrations (company_id, id),
  -- The create-or-update upsert targets this constraint (NULL rest_ids never conflict).
  CONSTRAINT reports_company_rest_id_key UNIQUE (company_id, rest_id)
);
-- Serves the list order (inspection_date, created_at, id all descending, by backward scan) and the
-- keyset cursor as a row comparison.
CREATE INDEX reports_list_order ON reports (company_id, inspection_date, created_at, id);

CREATE TABLE report_inspectors (
  company_id uuid NOT NULL,
  report_id  uuid NOT NULL,
  position   smallint NOT NULL,
  user_id    uuid NOT NULL,
  PRIMARY KEY (company_id, report_id, position),
  UNIQUE (company_id, report_id, user_id),
  FOREIGN KEY (company_id, report_id) REFERENCES reports (company_id, id) ON DELETE CASCADE,
  FOREIGN KEY (company_id, user_id) REFERENCES users (company_id, id)
);

CREATE TABLE report_invoice_items (
  company_id  uuid NOT NULL,
  report_id   uuid NOT NULL,
  position    smallint NOT NULL,
  description text NOT NULL,
  price_cents bigint NOT NULL CHECK (price_cents >= 0),
  PRIMARY KEY (company_id, report_id, position),
  FOREIGN KEY (company_id, report_id) REFERENCES reports (company_id, id) ON DELETE CASCADE
);
