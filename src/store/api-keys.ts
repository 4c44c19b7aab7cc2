import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '../db/pool.js';

/** Keys start with a recognisable prefix so that secret scanners can find leaked ones. */
export const KEY_PREFIX = 'irk_';

export const hashKey = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest();

/** 32 random bytes (256 bits), base64url, behind the prefix. */
export function newKey(): { key: string; prefix: string; hash: Buffer } {
  const key = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { key, prefix: key.slice(0, KEY_PREFIX.length + 8), hash: hashKey(key) };
}

export interface KeyPrincipal {
  companyId: string;
  keyId: string;
  integrationId: string;
}

/**
 * The company behind a key, found by the key's hash, or undefined for an unknown or revoked key.
 * The same round trip records last use, at most once a minute per key.
 */
export async function authenticate(db: Queryable, key: string): Promise<KeyPrincipal | undefined> {
  const { rows } = await db.query<KeyPrincipal>(
    `WITH k AS (
       SELECT company_id, id, integration_id, last_used_at FROM api_keys WHERE key_hash = $1
     ), touched AS (
       UPDATE api_keys a SET last_used_at = clock_timestamp()
         FROM k
        WHERE a.company_id = k.company_id AND a.id = k.id
          AND (k.last_used_at IS NULL OR k.last_used_at < clock_timestamp() - interval '1 minute')
     )
     SELECT company_id AS "companyId", id AS "keyId", integration_id AS "integrationId" FROM k`,
    [hashKey(key)]);
  return rows[0];
}

export interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
  createdAt: string;
}

/** Generates a key for the company's active integration, starting one if there is none. */
export async function createKey(db: Queryable, companyId: string): Promise<CreatedKey> {
  const { key, prefix, hash } = newKey();
  const { rows } = await db.query<Omit<CreatedKey, 'key'>>(
    `WITH existing AS (
       SELECT id FROM integrations WHERE company_id = $1 AND revoked_at IS NULL
     ), started AS (
       INSERT INTO integrations (company_id) SELECT $1 WHERE NOT EXISTS (SELECT 1 FROM existing)
       ON CONFLICT (company_id) WHERE revoked_at IS NULL DO NOTHING
       RETURNING id
     ), integration AS (
       SELECT id FROM existing UNION ALL SELECT id FROM started
     )
     INSERT INTO api_keys (company_id, integration_id, key_hash, prefix)
     SELECT $1, id, $2, $3 FROM integration
     RETURNING id, prefix, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt"`,
    [companyId, hash, prefix]);
  if (!rows[0]) throw new Error('could not create an API key: the integration changed concurrently, try again');
  return { ...rows[0], key };
}
