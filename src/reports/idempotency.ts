import { createHash, randomUUID } from 'node:crypto';
import { conflict, HttpError, refuse } from '../core/errors.js';
import type { Queryable } from '../db/pool.js';

/**
 * Idempotency-Key on POST /reports/new, as draft-ietf-httpapi-idempotency-key-header has it (and Stripe
 * does): the same key with the same body within KEY_LIFETIME answers what the first request answered
 * and writes nothing; with another body, 422; while the first is still in flight, 409. Keys are per
 * company. A request takes the key (a claim, migration 13); its write commits only while the claim is
 * current, in the statement that records the answer (write-statement.ts), so a key makes one report at
 * most, across processes, even when a process stops mid-request and a retry takes the key over.
 */

/** How long a key is remembered (24 hours), and how long a request may hold it before a retry may take it over. */
const KEY_LIFETIME = '24 hours';
const CLAIM_MS = 60_000;

/** The request that holds a key: the write carries it, and commits only while it is current. */
export interface IdempotencyClaim {
  key: string;
  claim: string;
}

/** What taking a key gives: the claim to write with, or the first request's answer to send again. */
export type Taken = { claim: IdempotencyClaim } | { replay: { status: number; answer: string } };

/** The key of an Idempotency-Key header: the draft's string form ("…") or, as Stripe's clients send it, bare. */
export function idempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const quoted = /^"(.*)"$/.exec(header);
  return quoted ? quoted[1] : header;
}

/** The body's fingerprint: its JSON with keys in order, so that the same body sent again matches however it is laid out. */
export function fingerprint(body: unknown): Buffer {
  return createHash('sha256').update(canonicalJson(body)).digest();
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Takes the company's key for this request: a new key (or one past its lifetime, or one whose request
 * stopped holding it past CLAIM_MS with the same body) is claimed; otherwise the answer to send again,
 * or 422 (another body) or 409 (its first request is still in flight).
 */
export async function takeKey(db: Queryable, companyId: string, key: string, print: Buffer): Promise<Taken> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const claim = randomUUID();
    const { rows: claimed } = await db.query({
      name: 'idempotency-claim',
      text: `INSERT INTO idempotency_keys AS k (company_id, key, fingerprint, claim, claimed_until, expires_at)
             VALUES ($1, $2, $3, $4, clock_timestamp() + $5 * interval '1 millisecond',
                     clock_timestamp() + interval '${KEY_LIFETIME}')
             ON CONFLICT (company_id, key) DO UPDATE
                SET fingerprint = EXCLUDED.fingerprint, claim = EXCLUDED.claim, claimed_until = EXCLUDED.claimed_until,
                    expires_at = EXCLUDED.expires_at, status = NULL, answer = NULL
              WHERE k.expires_at <= clock_timestamp()
                 OR (k.status IS NULL AND k.claimed_until <= clock_timestamp() AND k.fingerprint = EXCLUDED.fingerprint)
             RETURNING 1`,
      values: [companyId, key, print, claim, CLAIM_MS],
    });
    if (claimed.length > 0) return { claim: { key, claim } };
    const { rows } = await db.query<{ same: boolean; status: number | null; answer: string | null }>({
      name: 'idempotency-find',
      text: `SELECT fingerprint = $3 AS same, status, answer FROM idempotency_keys
              WHERE company_id = $1 AND key = $2 AND expires_at > clock_timestamp()`,
      values: [companyId, key, print],
    });
    const found = rows[0];
    // Gone meanwhile (expired and swept): take it anew.
    if (!found) continue;
    if (!found.same) throw differentBody();
    if (found.status !== null) return { replay: { status: found.status, answer: found.answer ?? '' } };
    throw inFlight();
  }
  throw inFlight();
}

const differentBody = () =>
  refuse.unprocessable('this Idempotency-Key was used with a different body: use a new key for a new request');
const inFlight = () =>
  conflict('a request with this Idempotency-Key is still in flight: retry once it has been answered');

/** The answer a write refused with (400, 409), kept for the key's retries; statuses worth retrying free the key instead. */
export async function settleKey(db: Queryable, companyId: string, held: IdempotencyClaim, err: unknown): Promise<void> {
  const final = err instanceof HttpError && err.status < 500 && err.status !== 429;
  await db.query({
    name: final ? 'idempotency-refused' : 'idempotency-release',
    text: final
      ? `UPDATE idempotency_keys SET status = $4, answer = $5, claim = NULL, claimed_until = NULL
          WHERE company_id = $1 AND key = $2 AND claim = $3`
      : 'DELETE FROM idempotency_keys WHERE company_id = $1 AND key = $2 AND claim = $3',
    values: final
      ? [companyId, held.key, held.claim, (err as HttpError).status, (err as HttpError).message]
      : [companyId, held.key, held.claim],
  });
}

/** Forgets keys past their lifetime, a bounded number at a time (a retry past it finds nothing anyway). */
export async function sweepExpiredKeys(db: Queryable, limit = 10_000): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM idempotency_keys WHERE ctid IN (
       SELECT ctid FROM idempotency_keys WHERE expires_at <= clock_timestamp() LIMIT $1)`,
    [limit],
  );
  return rowCount ?? 0;
}
