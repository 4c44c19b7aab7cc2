import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { migrate } from 'postgres-migrations';
import type { Queryable } from './pool.js';

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

/** The migration files (`1_core.sql` …) by the numeric id postgres-migrations records for them. */
async function migrationFiles(): Promise<Map<number, string>> {
  const names = (await readdir(MIGRATIONS_DIR)).filter((name) => /^\d+[-_].*\.sql$/.test(name));
  return new Map(names.map((name) => [Number.parseInt(name, 10), name]));
}

let files: Promise<Map<number, string>> | undefined;

/**
 * The files of db/migrations the database has not applied (empty when it is up to date). Throws
 * the driver's error when the database cannot be reached.
 */
export async function pendingMigrations(db: Queryable): Promise<string[]> {
  const expected = await (files ??= migrationFiles());
  let applied: Set<number>;
  try {
    const { rows } = await db.query<{ id: number }>('SELECT id FROM migrations');
    applied = new Set(rows.map((r) => r.id));
  } catch (err) {
    // 42P01 undefined_table: no migration has ever run on this database.
    if ((err as { code?: string }).code !== '42P01') throw err;
    applied = new Set();
  }
  return [...expected]
    .sort(([a], [b]) => a - b)
    .filter(([id]) => !applied.has(id))
    .map(([, name]) => name);
}
