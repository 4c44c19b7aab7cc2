import { expect } from 'chai';
import { api, newCompany, pool, type TestCompany } from './harness.js';
import { auth } from './webhooks.js';

/** The sandbox tests' companies: a live key and a test key, and their sandbox's reports. */

export interface Worlds extends TestCompany {
  testKey: string;
}

/** A company with a live key (newCompany's) and a test key issued through the application API. */
export async function withSandbox(inspectors: { name: string; email: string }[] = []): Promise<Worlds> {
  const company = await newCompany(inspectors);
  const res = await api()
    .post(`/internal/companies/${company.companyId}/api-keys`)
    .set(auth)
    .send({ mode: 'test' })
    .expect(201);
  expect(res.body.key).to.match(/^irk_test_/);
  expect(res.body.mode).to.equal('test');
  return { ...company, testKey: res.body.key };
}

export const create = (key: string, body: object, target: string | undefined = undefined) =>
  (target === undefined ? api() : api(target)).post('/reports/new').set('X-API-KEY', key).send(body);

/** The sandbox company of a company with a test key. */
export async function sandboxOf(company: TestCompany): Promise<string> {
  const { rows } = await pool().query<{ id: string }>('SELECT id FROM companies WHERE sandbox_of = $1', [
    company.companyId,
  ]);
  return rows[0]!.id;
}

/** `count` reports more in the company's sandbox, written straight to the table (no partner API). */
export async function fillSandbox(company: TestCompany, count: number): Promise<void> {
  await pool().query(
    `INSERT INTO reports (company_id, client_names, inspection_date)
     SELECT $1, ARRAY['Filler'], DATE '2026-01-01' FROM generate_series(1, $2::integer)`,
    [await sandboxOf(company), count],
  );
}

/** The reports in the company's sandbox. */
export async function sandboxReports(company: TestCompany): Promise<number> {
  const { rows } = await pool().query<{ n: number }>('SELECT count(*)::int AS n FROM reports WHERE company_id = $1', [
    await sandboxOf(company),
  ]);
  return rows[0]!.n;
}
