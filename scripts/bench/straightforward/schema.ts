// The straightforward implementation's schema (`straightforward`): normalized tables filled with a copy
// of the service's seeded data, so the same ids, restIds and API keys work against both.

import type pg from 'pg';
import { columnDefinition, PLAIN_COLUMNS } from './catalogue.js';

/** The plain columns, copied as they are from the service's table. */
const COPIED = PLAIN_COLUMNS.map(([column]) => column).join(', ');

export const SCHEMA = 'straightforward';

const TABLES = `
  CREATE TABLE companies (
    id   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name text NOT NULL
  );
  CREATE TABLE users (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    company_id uuid NOT NULL,
    name       text NOT NULL,
    email      text NOT NULL
  );
  CREATE TABLE api_keys (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    company_id uuid NOT NULL,
    key_hash   bytea NOT NULL UNIQUE
  );
  CREATE TABLE reports (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    company_id        uuid NOT NULL,
    status            text NOT NULL DEFAULT 'new',
    ${PLAIN_COLUMNS.map(columnDefinition).join(',\n    ')},
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (company_id, rest_id)
  );
  CREATE TABLE report_inspectors (
    report_id uuid NOT NULL,
    position  int NOT NULL,
    user_id   uuid NOT NULL,
    PRIMARY KEY (report_id, position)
  );
  CREATE TABLE report_invoice_items (
    report_id   uuid NOT NULL,
    position    int NOT NULL,
    description text NOT NULL,
    price_cents bigint NOT NULL,
    PRIMARY KEY (report_id, position)
  );`;

const INDEXES_AND_REFERENCES = `
  CREATE UNIQUE INDEX users_company_email ON users (company_id, lower(email));
  CREATE INDEX reports_list ON reports (company_id, inspection_date DESC, created_at DESC, id DESC);
  ALTER TABLE users ADD FOREIGN KEY (company_id) REFERENCES companies;
  ALTER TABLE api_keys ADD FOREIGN KEY (company_id) REFERENCES companies;
  ALTER TABLE reports ADD FOREIGN KEY (company_id) REFERENCES companies;
  ALTER TABLE report_inspectors ADD FOREIGN KEY (report_id) REFERENCES reports ON DELETE CASCADE,
                                ADD FOREIGN KEY (user_id) REFERENCES users;
  ALTER TABLE report_invoice_items ADD FOREIGN KEY (report_id) REFERENCES reports ON DELETE CASCADE;`;

const COPY = `
  INSERT INTO companies (id, name) SELECT id, name FROM public.companies;
  INSERT INTO users (id, company_id, name, email) SELECT id, company_id, name, email FROM public.users;
  INSERT INTO api_keys (id, company_id, key_hash) SELECT id, company_id, key_hash FROM public.api_keys;
  INSERT INTO reports (id, company_id, status, created_at, updated_at, ${COPIED})
  SELECT id, company_id, status, created_at, updated_at, ${COPIED}
    FROM public.reports;
  INSERT INTO report_inspectors (report_id, position, user_id)
  SELECT r.id, e.position, u.id
    FROM public.reports r, unnest(r.inspector_emails) WITH ORDINALITY AS e(email, position)
    JOIN public.users u ON lower(u.email) = lower(e.email)
   WHERE u.company_id = r.company_id;
  INSERT INTO report_invoice_items (report_id, position, description, price_cents)
  SELECT r.id, i.position, i.description, i.price_cents
    FROM public.reports r,
         unnest(r.invoice_descriptions, r.invoice_prices) WITH ORDINALITY AS i(description, price_cents, position);`;

/**
 * (Re)creates the schema and copies the service's data into it. Secondary indexes and foreign keys are
 * added after the copy (checked in bulk, not row by row): only a matter of seeding time.
 */
export async function createStraightforwardSchema(db: pg.ClientBase): Promise<void> {
  await db.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE; CREATE SCHEMA ${SCHEMA}`);
  await db.query(`SET search_path = ${SCHEMA}`);
  try {
    await db.query(TABLES);
    await db.query(COPY);
    await db.query(INDEXES_AND_REFERENCES);
    await db.query('ANALYZE companies, users, api_keys, reports, report_inspectors, report_invoice_items');
  } finally {
    await db.query('RESET search_path');
  }
}
