// The statements the stock PostgreSQL compiled with JIT (from pg_stat_statements): a plan past
// jit_above_cost compiles on every execution, so under load none of the service's statements should.

import pg from 'pg';

async function withClient<T>(url: string, fn: (db: pg.Client) => Promise<T>): Promise<T> {
  const db = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000, query_timeout: 60_000 });
  await db.connect();
  try {
    return await fn(db);
  } finally {
    await db.end();
  }
}

/** Starts pg_stat_statements' counters afresh (after the seeding, so that only the benchmark's statements count). */
export const resetStatements = (url: string) =>
  withClient(url, async (db) => {
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await db.query('SELECT pg_stat_statements_reset()');
  });

export interface JitStatement {
  query: string;
  calls: number;
  jitFunctions: number;
  /** Milliseconds spent compiling, over all calls. */
  jitMs: number;
  meanMs: number;
}

/** Every statement with jit_functions > 0 since the reset, the most compiled first. */
export const jitStatements = (url: string) =>
  withClient(url, async (db) => {
    const { rows } = await db.query<JitStatement>(
      `SELECT query, calls::float8 AS calls, jit_functions::float8 AS "jitFunctions", mean_exec_time AS "meanMs",
              jit_generation_time + jit_inlining_time + jit_optimization_time + jit_emission_time AS "jitMs"
         FROM pg_stat_statements WHERE jit_functions > 0 ORDER BY jit_functions DESC`,
    );
    return rows;
  });

export function printJitStatements(statements: JitStatement[]): void {
  console.log(`statements compiled with JIT: ${statements.length === 0 ? 'none' : statements.length}`);
  for (const s of statements) {
    const [jit, mean] = [(s.jitMs / s.calls).toFixed(1), s.meanMs.toFixed(1)];
    console.log(`  ${s.calls} calls, ${s.jitFunctions} functions, JIT ${jit} ms a call, mean ${mean} ms:`);
    console.log(`    ${s.query.replace(/\s+/g, ' ')}`);
  }
}
