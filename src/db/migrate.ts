import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { migrate } from 'postgres-migrations';

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../db/migrations');

/** Applies db/migrations. postgres-migrations holds an advisory lock, so concurrent starts are safe. */
export async function runMigrations(connectionString: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await migrate({ client }, MIGRATIONS_DIR, { logger: () => undefined });
  } finally {
    await client.end();
  }
}
