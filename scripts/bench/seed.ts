// Seeding for the benchmark: set-based SQL through the service's own schema and key store.

import type pg from 'pg';
import type { ReportInput } from '../../src/api-types.js';
import { addUser, createCompany } from '../../src/companies/index.js';
import { createKey } from '../../src/integrations/index.js';

export interface SeededCompany {
  companyId: string;
  key: string;
  inspectorEmail: string;
}

/**
 * A company with two inspectors, an API key and `reports` reports (restIds seed-1 … seed-N), each with
 * one inspector and two invoice items, inserted in chunks by generate_series.
 */
export async function seedCompany(db: pg.Client, name: string, reports: number): Promise<SeededCompany> {
  const company = await createCompany(db, name);
  const inspector = await addUser(db, company.id, 'Dana Inspector', `dana@${name.toLowerCase()}.example`);
  await addUser(db, company.id, 'Sam Inspector', `sam@${name.toLowerCase()}.example`);
  const { key } = await createKey(db, company.id);
  const { rows } = await db.query<{ id: string }>('SELECT id FROM integrations WHERE company_id = $1', [company.id]);
  const integrationId = rows[0]!.id;
  // Spread over ten years of inspection dates, created one second apart, with one inspector and two
  // invoice items each on the report row, as the store writes a partner's report.
  const chunk = 250_000;
  for (let from = 1; from <= reports; from += chunk) {
    const to = Math.min(reports, from + chunk - 1);
    await db.query(
      `INSERT INTO reports (company_id, integration_id, rest_id, from_rest_service, client_names, client_emails,
                            client_phones, inspection_date, address, year_built, square_feet, notes,
                            agent_name, agent_email, agent_phone, created_at, updated_at,
                            inspector_names, inspector_emails, invoice_descriptions, invoice_prices)
       SELECT $1, $2, 'seed-' || g, 'Bench CRM', ARRAY['Client ' || g], ARRAY['client' || g || '@example.com'],
              ARRAY['555-0100'], date '2016-01-01' + (g::bigint * 7919 % 3650)::int, g || ' Main Street, Springfield',
              '1987', '2150', 'Roof shows wear on the north side; gutters need cleaning.',
              'Alex Agent', 'alex@agents.example', '555-0199', t, t,
              ARRAY[$6], ARRAY[$7], ARRAY['Home inspection', 'Radon test'], ARRAY[45000, 15000]::bigint[]
         FROM generate_series($3::int, $4::int) g, LATERAL (SELECT now() - make_interval(secs => $5::int - g)) s(t)`,
      [company.id, integrationId, from, to, reports, inspector!.name, inspector!.email],
    );
  }
  return { companyId: company.id, key, inspectorEmail: inspector!.email };
}

/** The report the benchmarks create and update through the API. */
export function benchReport(restId: string, inspectorEmail: string): ReportInput {
  return {
    restId,
    fromRestService: 'Bench CRM',
    clientNames: ['Jordan Smith', 'Casey Smith'],
    clientEmails: 'jordan@example.com',
    clientPhones: '555-0100',
    inspectionDate: '2026-03-14',
    address: '12 Elm Street, Springfield',
    yearBuilt: '1987',
    squareFeet: '2150',
    notes: 'Roof shows wear on the north side; gutters need cleaning.',
    agentName: 'Alex Agent',
    agentEmail: 'alex@agents.example',
    agentPhone: '555-0199',
    inspectorEmails: inspectorEmail,
    invoiceItems: ['Home inspection: $450', 'Radon test: $150'],
  };
}
