import type { KeyPrincipal } from '../../core/request-context.js';
import { randomBytes } from 'node:crypto';
import { sha256 } from '../../core/sha256.js';
import type { Queryable } from '../../db/pool.js';
import { isUuid } from '../../core/ids.js';
import type { ApiKeySummary, CreatedKey } from '../../api-types.js';
import { isoTimestamp } from '../../db/iso-timestamp.js';
import { keysetOrder, keysetPage, type Page, type PageAt } from '../../db/keyset.js';
import { isReadOnlyTransaction } from '../../db/sqlstate.js';
import { sandboxOf } from '../../companies/index.js';

/** Keys start with a recognisable prefix so that secret scanners can find leaked ones; a test key's says so. */
export const KEY_PREFIX = 'irk_';
const PREFIXES = { live: KEY_PREFIX, test: `${KEY_PREFIX}test_` } as const;

/** Which mode a key works in: live (the company's own reports) or test (its sandbox's). */
export type KeyMode = keyof typeof PREFIXES;

/** A key's mode is told by its prefix alone, here and in SQL (a key's stored prefix column, `prefixSql`). */
const modeOf = (key: string): KeyMode => (key.startsWith(PREFIXES.test) ? 'test' : 'live');
const modeSql = (prefixSql: string) =>
  `CASE WHEN starts_with(${prefixSql}, '${PREFIXES.test}') THEN 'test' ELSE 'live' END`;

export const hashKey = (key: string): Buffer => sha256(key);

/** 32 random bytes (256 bits), base64url, behind the prefix. */
export function newKey(mode: KeyMode = 'live'): { key: string; prefix: string; hash: Buffer } {
  let key: string;
  // A live key never looks like a test key (a random part that starts with "test_", once in 2^30).
  do key = `${PREFIXES[mode]}${randomBytes(32).toString('base64url')}`;
  while (mode === 'live' && key.startsWith(PREFIXES.test));
  return { key, prefix: keyPrefix(key, mode), hash: hashKey(key) };
}

/** The part of a key that may be shown (lists, the audit trail): its mode's prefix and 8 characters. */
const keyPrefix = (key: string, mode: KeyMode): string => key.slice(0, PREFIXES[mode].length + 8);

/**
 * What newKey makes: the prefix and 43 base64url characters, the last of which carries the 32 bytes'
 * final 4 bits and two zero bits, so only every fourth letter of the alphabet can end a key.
 */
const ISSUED_KEY = new RegExp(`^${KEY_PREFIX}(?:test_)?[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$`);

/** Whether the key can be one this service issued; one that cannot is refused without a lookup. */
export const isIssuedKeyShape = (key: string): boolean => ISSUED_KEY.test(key);

export type { KeyPrincipal };

/**
 * When each database (a pool) last refused to record a key's use for being read-only: for a minute after,
 * keys are looked up without recording it, so that on a standby each lookup is one round trip, not a
 * refused one and another. Recording is best-effort: a key's use goes unrecorded while nothing can be written.
 */
const readOnlySince = new WeakMap<Queryable, number>();
const RECORDING_PAUSE_MS = 60_000;

/**
 * The company behind a key, found by the key's hash, or undefined for an unknown or revoked key.
 * The same round trip records last use, at most once a minute per key, unless the database is read-only.
 */
export async function authenticate(db: Queryable, key: string): Promise<KeyPrincipal | undefined> {
  if (Date.now() - (readOnlySince.get(db) ?? -Infinity) >= RECORDING_PAUSE_MS) {
    try {
      return await lookUpKey(db, key, true);
    } catch (err) {
      if (!isReadOnlyTransaction(err)) throw err;
      readOnlySince.set(db, Date.now());
    }
  }
  return lookUpKey(db, key, false);
}

async function lookUpKey(db: Queryable, key: string, record: boolean): Promise<KeyPrincipal | undefined> {
  const mode = modeOf(key);
  const test = mode === 'test';
  // A test key's company is its sandbox; its owner, whose users its reports name, the sandbox's owner.
  const owner = test ? '(SELECT c.sandbox_of FROM companies c WHERE c.id = k.company_id)' : 'k.company_id';
  // A statement that writes is refused whole by a read-only database, even when it would change no row.
  const touched = `, touched AS (
       UPDATE api_keys a SET last_used_at = clock_timestamp()
         FROM k
        WHERE a.company_id = k.company_id AND a.id = k.id
          -- a.last_used_at, not k's snapshot: a concurrent first use re-checks the row it waited for.
          AND (a.last_used_at IS NULL OR a.last_used_at < clock_timestamp() - interval '1 minute')
     )`;
  const { rows } = await db.query<Omit<KeyPrincipal, 'keyPrefix'>>({
    name: `authenticate-${test ? 'test-key' : 'key'}${record ? '' : '-unrecorded'}`,
    text: `WITH k AS (
       SELECT company_id, id, integration_id, last_used_at FROM api_keys WHERE key_hash = $1
     )${record ? touched : ''}
     SELECT company_id AS "companyId", id AS "keyId", integration_id AS "integrationId",
            ${owner} AS "ownerCompanyId", '${mode}' AS mode
       FROM k`,
    values: [hashKey(key)],
  });
  return rows[0] && { ...rows[0], keyPrefix: keyPrefix(key, mode) };
}

/**
 * Generates a key for the company's active integration, starting one if there is none. When another
 * call starts the integration at the same moment, this statement inserts nothing (its start yields to
 * the other one's): it runs again and then finds that integration.
 */
export async function createKey(db: Queryable, companyId: string, mode: KeyMode = 'live'): Promise<CreatedKey> {
  const { key, prefix, hash } = newKey(mode);
  // A test key is a key of the company's sandbox (a company of its own, made on first use).
  const owner = mode === 'test' ? await sandboxOf(db, companyId) : companyId;
  for (let attempt = 1; ; attempt++) {
    const { rows } = await insertKey(db, owner, hash, prefix);
    if (rows[0]) return { ...rows[0], key, mode } as CreatedKey;
    if (attempt === 3) throw new Error('could not create an API key: the integration kept changing concurrently');
  }
}

function insertKey(db: Queryable, companyId: string, hash: Buffer, prefix: string) {
  return db.query<Omit<CreatedKey, 'key'>>(
    `WITH existing AS (
       -- FOR SHARE waits for a revocation in progress and then skips the revoked row, so a key is
       -- never added to an integration that is being revoked (revokeIntegration locks it first).
       SELECT id FROM integrations WHERE company_id = $1 AND revoked_at IS NULL FOR SHARE
     ), started AS (
       INSERT INTO integrations (company_id) SELECT $1 WHERE NOT EXISTS (SELECT 1 FROM existing)
       ON CONFLICT (company_id) WHERE revoked_at IS NULL DO NOTHING
       RETURNING id
     ), integration AS (
       SELECT id FROM existing UNION ALL SELECT id FROM started
     )
     INSERT INTO api_keys (company_id, integration_id, key_hash, prefix)
     SELECT $1, id, $2, $3 FROM integration
     RETURNING id, prefix, ${isoTimestamp('created_at')} AS "createdAt"`,
    [companyId, hash, prefix],
  );
}

/** The companies whose keys are the company's: its own and its sandbox's. */
const OWNERS = '(SELECT id FROM companies WHERE id = $1 OR sandbox_of = $1)';

/** A key as lists show it. */
const KEY_COLUMNS = `a.id, a.prefix,
            ${isoTimestamp('a.created_at')} AS "createdAt",
            ${isoTimestamp('a.last_used_at')} AS "lastUsedAt",
            ${modeSql('a.prefix')} AS mode`;

/** The company's live and test keys, newest first (only an active integration has keys: revoking deletes them). */
export async function listKeys(db: Queryable, companyId: string): Promise<ApiKeySummary[]> {
  const { rows } = await db.query<ApiKeySummary>(
    `SELECT ${KEY_COLUMNS} FROM api_keys a WHERE a.company_id IN ${OWNERS} ORDER BY a.created_at DESC, a.id DESC`,
    [companyId],
  );
  return rows;
}

/** A page of listKeys (db/keyset.ts: `at` is a key's id). */
export function pageKeys(db: Queryable, companyId: string, limit: number, at: PageAt): Promise<Page<ApiKeySummary>> {
  return keysetPage(at, limit, async (cursor, backwards, rows) => {
    const { beyond, order } = keysetOrder('DESC', backwards);
    const { rows: keys } = await db.query<ApiKeySummary>(
      `SELECT ${KEY_COLUMNS} FROM api_keys a
        WHERE a.company_id IN ${OWNERS}
          AND ($3::uuid IS NULL OR (a.created_at, a.id) ${beyond}
               (SELECT created_at, id FROM api_keys WHERE company_id IN ${OWNERS} AND id = $3))
        ORDER BY a.created_at ${order}, a.id ${order} LIMIT $2`,
      [companyId, rows, cursor],
    );
    return keys;
  });
}

/** One of the company's keys (live or test), or undefined. */
export async function findKey(db: Queryable, companyId: string, keyId: string): Promise<ApiKeySummary | undefined> {
  if (!isUuid(keyId)) return undefined;
  const { rows } = await db.query<ApiKeySummary>(
    `SELECT ${KEY_COLUMNS} FROM api_keys a WHERE a.company_id IN ${OWNERS} AND a.id = $2`,
    [companyId, keyId],
  );
  return rows[0];
}

/**
 * Revokes one key by deleting it. Keys are cached in every server process (ApiKeyCache), but the
 * deletion is notified on commit (db/migrations/3_api_key_revocation_notify.sql) and each cache waits
 * for that delivery before trusting an entry, so the very next request with the key fails on every
 * server process. The key's prefix and mode, or undefined when the company has no such key.
 */
export async function revokeKey(
  db: Queryable,
  companyId: string,
  keyId: string,
): Promise<{ prefix: string; mode: KeyMode } | undefined> {
  if (!isUuid(keyId)) return undefined;
  const { rows } = await db.query<{ prefix: string; mode: KeyMode }>(
    `DELETE FROM api_keys WHERE company_id IN ${OWNERS} AND id = $2
     RETURNING prefix, ${modeSql('prefix')} AS mode`,
    [companyId, keyId],
  );
  return rows[0];
}
