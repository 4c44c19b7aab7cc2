import pg from 'pg';
import { createStraightforwardSchema, SCHEMA } from '../../scripts/bench/straightforward/schema.js';
import { databaseUrl, pool } from '../support/harness.js';

/** The yardsticks' tables made afresh from the service's data, and a pool of the yardsticks' own on them. */
export async function yardstickPool(): Promise<pg.Pool> {
  const client = await pool().connect();
  try {
    await createStraightforwardSchema(client);
  } finally {
    client.release();
  }
  return new pg.Pool({ connectionString: databaseUrl(), options: `-c search_path=${SCHEMA}`, max: 4 });
}
