import { sha256 } from '../core/sha256.js';
import { withTransaction, type Pool, type Queryable } from '../db/pool.js';

/** Failed sign-ins allowed per account and per client address in a window (ten in a quarter of an hour). */
export const SIGN_IN_LIMIT = 10;
export const SIGN_IN_WINDOW_SECONDS = 15 * 60;

/** What a sign-in is counted against: its account (an e-mail, or the operator's token) and its client address. */
export const limitKeys = (account: string, address: string | undefined) => [
  `account:${account.trim().toLowerCase()}`,
  `address:${address ?? ''}`,
];

/** The keys' hashes in one order, so that two attempts lock their shared rows alike. */
const hashesOf = (keys: string[]) => keys.map((key) => sha256(key)).sort(Buffer.compare);

/**
 * Takes one attempt on each key before the password is checked, unless a key is at its limit: then
 * nothing is counted (a refused attempt counts against no one), and the seconds until its window ends
 * are returned. Counting first bounds the guesses of parallel attempts too; every process shares the
 * counts (PostgreSQL rows, locked for the moment of the count). A success gives its attempt back (refund).
 */
export async function takeAttempt(pool: Pool, keys: string[]): Promise<{ retryAfter?: number }> {
  const hashes = hashesOf(keys);
  return withTransaction(pool, async (db) => {
    // A window that has ended starts again at the first attempt after it.
    await db.query(
      `INSERT INTO console_sign_in_failures AS f (key_hash, window_start, failures)
       SELECT key_hash, clock_timestamp(), 0 FROM unnest($1::bytea[]) AS key_hash
       ON CONFLICT (key_hash) DO UPDATE SET window_start = clock_timestamp(), failures = 0
        WHERE f.window_start <= clock_timestamp() - make_interval(secs => $2)`,
      [hashes, SIGN_IN_WINDOW_SECONDS],
    );
    const { rows } = await db.query<{ seconds: number }>(
      `SELECT ceil(extract(epoch FROM window_start + make_interval(secs => $2) - clock_timestamp()))::int AS seconds
         FROM console_sign_in_failures WHERE key_hash = ANY($1) AND failures >= $3`,
      [hashes, SIGN_IN_WINDOW_SECONDS, SIGN_IN_LIMIT],
    );
    if (rows.length > 0) return { retryAfter: Math.max(1, ...rows.map((r) => r.seconds)) };
    await db.query('UPDATE console_sign_in_failures SET failures = failures + 1 WHERE key_hash = ANY($1)', [hashes]);
    return {};
  });
}

/** Gives back a successful sign-in's attempt: only failures count. */
export async function refund(db: Queryable, keys: string[]): Promise<void> {
  await db.query('UPDATE console_sign_in_failures SET failures = greatest(failures - 1, 0) WHERE key_hash = ANY($1)', [
    hashesOf(keys),
  ]);
}
