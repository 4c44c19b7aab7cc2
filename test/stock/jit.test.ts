// The JIT check of npm run test:stock (test/stock/run.ts), run last on the cluster the suites ran on:
// pg_stat_statements holds every statement they sent. With JIT on (PostgreSQL's default), a statement
// costed past jit_above_cost is compiled to machine code on every run, seconds of work for one that
// takes milliseconds; a planner estimate far off is enough to get there (migration 23).
import { expect } from 'chai';
import pg from 'pg';

/** The keyed create may take this many times the unkeyed one's mean: the same plan, a key's probe and row more. */
const MAX_RATIO = 3;
/** How much of a statement's text a failure shows: its start and its end (the write's texts differ there). */
const HEAD = 120;
const TAIL = 80;

interface WriteStatement {
  keyed: boolean;
  calls: number;
  mean_ms: number;
}

describe('JIT on the stock PostgreSQL, over every statement the suites ran (pg_stat_statements)', () => {
  let client: pg.Client;

  before(async () => {
    const url = process.env.DATABASE_URL;
    if (!url) throw new Error('DATABASE_URL must name the cluster the suites ran on (npm run test:stock)');
    client = new pg.Client({ connectionString: url });
    await client.connect();
  });

  after(async () => {
    await client?.end();
  });

  it('runs on a server that compiles plans past jit_above_cost (else this check proves nothing)', async () => {
    const { rows } = await client.query<{ available: boolean; jit: string }>(
      "SELECT pg_jit_available() AS available, current_setting('jit') AS jit",
    );
    expect(rows[0]).to.deep.equal({ available: true, jit: 'on' });
  });

  it('compiled no statement to machine code (jit_functions is 0 for every one)', async () => {
    const { rows } = await client.query<{ calls: string; jit_functions: string; query: string }>(
      `SELECT sum(calls) AS calls, sum(jit_functions) AS jit_functions, regexp_replace(query, '\\s+', ' ', 'g') AS query
         FROM pg_stat_statements WHERE jit_functions > 0
        GROUP BY query ORDER BY sum(jit_functions) DESC`,
    );
    const shown = (text: string) =>
      text.length <= HEAD + TAIL ? text : `${text.slice(0, HEAD)} … ${text.slice(-TAIL)}`;
    const listed = rows.map((r) => `${r.calls} calls, ${r.jit_functions} functions compiled: ${shown(r.query)}`);
    expect(listed, `statements compiled by JIT:\n${listed.join('\n')}\n`).to.deep.equal([]);
  });

  it(`ran the keyed create within ${MAX_RATIO} times the unkeyed create's mean time, both called`, async () => {
    // A create alone runs the write statement's `distinct` text (no folding of writes of one restId).
    const { rows } = await client.query<WriteStatement>(
      `SELECT query LIKE '%idempotency_key_kept%' AS keyed, sum(calls)::int AS calls,
              sum(total_exec_time) / sum(calls) AS mean_ms
         FROM pg_stat_statements
        WHERE query LIKE '%WITH i AS MATERIALIZED%' AND query NOT LIKE '%folded AS (%'
        GROUP BY 1`,
    );
    const keyed = rows.find((r) => r.keyed);
    const unkeyed = rows.find((r) => !r.keyed);
    const seen = JSON.stringify(rows);
    expect(keyed?.calls, `keyed creates: ${seen}`).to.be.above(0);
    expect(unkeyed?.calls, `unkeyed creates: ${seen}`).to.be.above(0);
    expect(keyed!.mean_ms, `mean ms of each: ${seen}`).to.be.at.most(MAX_RATIO * unkeyed!.mean_ms);
  });
});
