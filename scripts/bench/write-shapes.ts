/**
 * The benchmark's write-shape experiment: what PostgreSQL spends per report written, whatever the
 * service does around it. Four shapes, each driven from 16 connections for a few seconds straight
 * through pg (no HTTP): the service's upsert statement with one create each, the same batched as the
 * service batches them (ReportWriter: one statement in flight, the creates that arrive meanwhile
 * together), a plain single-row INSERT of the same columns, and a multi-row INSERT of 16 reports per
 * statement (the bound for batching several partners' creates into one statement and one commit). The
 * reports are written into the large company; every one is new.
 */
import pg from 'pg';
import { ReportWriter } from '../../src/reports/write.js';
import { benchReport } from './seed.js';

export interface WriteShape {
  shape: string;
  rowsPerSec: number;
  /** PostgreSQL CPU per report written, in µs. */
  postgresUsPerRow: number;
}

const CONNECTIONS = 16;
const BATCH = 16;
const COLUMNS = `company_id, integration_id, rest_id, from_rest_service, client_names, client_emails, client_phones,
  inspection_date, address, year_built, square_feet, notes, agent_name, agent_email, agent_phone,
  inspector_names, inspector_emails, invoice_descriptions, invoice_prices`;
/** One report's VALUES, its four parameters from `first` on: company, integration, restId, inspector's address. */
const rowValues = (first: number) =>
  `($${first}::uuid, $${first + 1}::uuid, $${first + 2}, 'Bench CRM', ARRAY['Jordan Smith', 'Casey Smith'],
    ARRAY['jordan@example.com'], ARRAY['555-0100'], '2026-03-14', '12 Elm Street, Springfield', '1987', '2150',
    'Roof shows wear on the north side; gutters need cleaning.', 'Alex Agent', 'alex@agents.example', '555-0199',
    ARRAY['Dana Inspector'], ARRAY[$${first + 3}], ARRAY['Home inspection', 'Radon test'], ARRAY[45000, 15000]::bigint[])`;
const insert = (rows: number) =>
  `INSERT INTO reports (${COLUMNS}) VALUES ${Array.from({ length: rows }, (_, i) => rowValues(i * 4 + 1)).join(', ')}`;

/**
 * Runs the four shapes against the database at url, for `seconds` each, and returns their rate and
 * PostgreSQL's CPU per report (postgresCpuSeconds: the CPU its processes have used so far).
 */
export async function measureWriteShapes(
  url: string,
  company: { companyId: string; inspectorEmail: string },
  postgresCpuSeconds: () => number,
  seconds = 5,
): Promise<WriteShape[]> {
  const pool = new pg.Pool({ connectionString: url, max: CONNECTIONS });
  try {
    const { rows } = await pool.query<{ id: string }>('SELECT id FROM integrations WHERE company_id = $1', [
      company.companyId,
    ]);
    const integrationId = rows[0]!.id;
    let n = 0;
    const restId = () => `bench-shape-${process.pid}-${++n}`;
    const input = () => benchReport(restId(), company.inspectorEmail);
    const params = (count: number) =>
      Array.from({ length: count }, () => [company.companyId, integrationId, restId(), company.inspectorEmail]).flat();
    const origin = { companyId: company.companyId, integrationId };
    const alone = new ReportWriter(pool, { batchesInFlight: CONNECTIONS });
    const batched = new ReportWriter(pool);
    const shapes: [string, number, () => Promise<unknown>][] = [
      ['upsert, one per statement', 1, () => alone.createOrUpdate(origin, input())],
      ['upsert, batched (the service)', 1, () => batched.createOrUpdate(origin, input())],
      ['plain INSERT', 1, () => pool.query({ name: 'bench-insert-1', text: insert(1), values: params(1) })],
      [
        `INSERT of ${BATCH} rows`,
        BATCH,
        () => pool.query({ name: `bench-insert-${BATCH}`, text: insert(BATCH), values: params(BATCH) }),
      ],
    ];
    const results: WriteShape[] = [];
    for (const [shape, perCall, write] of shapes) {
      const until = Date.now() + seconds * 1000;
      let written = 0;
      const [cpuBefore, started] = [postgresCpuSeconds(), Date.now()];
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (Date.now() < until) {
            await write();
            written += perCall;
          }
        }),
      );
      const elapsed = (Date.now() - started) / 1000;
      results.push({
        shape,
        rowsPerSec: written / elapsed,
        postgresUsPerRow: ((postgresCpuSeconds() - cpuBefore) / written) * 1e6,
      });
    }
    return results;
  } finally {
    await pool.end();
  }
}
