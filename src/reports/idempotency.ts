import { createHash, randomUUID } from 'node:crypto';
import { conflict, HttpError, refuse, unavailable } from '../core/errors.js';
import { Batcher } from '../db/batcher.js';
import type { Queryable } from '../db/pool.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';

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

/** One request's take of a key, in a batch of takes (one statement, one commit for all). */
interface Take {
  companyId: string;
  key: string;
  print: Buffer;
  claim: string;
}

type Found = { claimed: boolean; found: boolean; same: boolean; status: number | null; answer: string | null };

/**
 * Takes of many requests in one statement: each key new (or past its lifetime, or held past CLAIM_MS
 * by a request that never answered, with the same body) is claimed; for the others, the key's row as
 * it was before the statement (a key another transaction takes meanwhile is not found: taken again).
 */
async function takeAll(db: Queryable, takes: Take[]): Promise<PromiseSettledResult<Found>[]> {
  const input = takes.map((t, ord) => ({
    ord,
    company_id: t.companyId,
    key: t.key,
    print: t.print.toString('hex'),
    claim: t.claim,
  }));
  const { rows } = await db.query<Found>({
    name: 'idempotency-take',
    text: `WITH i AS (
             SELECT * FROM jsonb_to_recordset($1::jsonb) AS i(ord int, company_id uuid, key text, print text, claim uuid)
           ), taken AS (
             INSERT INTO idempotency_keys AS k (company_id, key, fingerprint, claim, claimed_until, expires_at)
             SELECT company_id, key, decode(print, 'hex'), claim, clock_timestamp() + $2 * interval '1 millisecond',
                    clock_timestamp() + interval '${KEY_LIFETIME}'
               FROM i ORDER BY company_id, key
             ON CONFLICT (company_id, key) DO UPDATE
                SET fingerprint = EXCLUDED.fingerprint, claim = EXCLUDED.claim, claimed_until = EXCLUDED.claimed_until,
                    expires_at = EXCLUDED.expires_at, status = NULL, answer = NULL
              WHERE k.expires_at <= clock_timestamp()
                 OR (k.status IS NULL AND k.claimed_until <= clock_timestamp() AND k.fingerprint = EXCLUDED.fingerprint)
             RETURNING company_id, key, claim
           )
           SELECT t.claim IS NOT NULL AS claimed, k.key IS NOT NULL AS found,
                  coalesce(k.fingerprint = decode(i.print, 'hex'), false) AS same, k.status, k.answer
             FROM i
             LEFT JOIN taken t ON t.company_id = i.company_id AND t.key = i.key AND t.claim = i.claim
             -- LATERAL: an index probe per take (a join on the whole table is planned as a scan of it).
             LEFT JOIN LATERAL (SELECT k.fingerprint, k.status, k.answer, k.key FROM idempotency_keys k
                                 WHERE k.company_id = i.company_id AND k.key = i.key
                                   AND k.expires_at > clock_timestamp()) k ON true
            ORDER BY i.ord`,
    values: [JSON.stringify(input), CLAIM_MS],
  });
  return rows.map((value) => ({ status: 'fulfilled', value }));
}

/** Takes of keys per company, gathered into batches as writes are (db/batcher.ts). */
const TAKES_PER_BATCH = 64;

/**
 * The keys of POST /reports/new. A request takes the company's key (409 at once when a request of
 * this process holds it); takes that arrive while the company's batch is in the database leave
 * together, so keeping keys costs creates a statement per batch, not a commit per request.
 */
export class IdempotencyKeys {
  private readonly batcher: Batcher<Take, Found>;
  /** Keys held by requests of this process, by "<company> <key>". */
  private readonly held = new Set<string>();

  constructor(
    private readonly db: Queryable,
    { waitMillis = 5000, maxInFlight = 2 } = {},
  ) {
    this.batcher = new Batcher<Take, Found>({
      run: (takes) => takeAll(db, takes),
      maxInFlight,
      maxItems: TAKES_PER_BATCH,
      maxBytes: 1024 * 1024,
      size: (take) => take.key.length + 200,
      group: (take) => take.companyId,
      key: () => undefined,
      failsWaiting: (err) => isDatabaseUnavailable(err),
      waitMillis,
      tooLong: () => unavailable('database unavailable'),
    });
  }

  /**
   * Takes the company's key for this request: the claim to write with, or the first request's answer
   * to send again; 422 for another body, 409 while the first request is in flight. The caller ends
   * with done(), whatever happened.
   */
  async take(companyId: string, key: string, print: Buffer): Promise<Taken> {
    const id = `${companyId} ${key}`;
    if (this.held.has(id)) throw inFlight();
    this.held.add(id);
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        const claim = randomUUID();
        const found = await this.batcher.submit({ companyId, key, print, claim });
        if (found.claimed) return { claim: { key, claim } };
        // Taken by another process meanwhile, and not yet in this statement's snapshot: take it anew.
        if (!found.found) continue;
        if (!found.same) throw differentBody();
        if (found.status !== null) return { replay: { status: found.status, answer: found.answer ?? '' } };
        throw inFlight();
      }
      throw inFlight();
    } catch (err) {
      this.held.delete(id);
      throw err;
    }
  }

  /** The request that took the key has answered (or failed): another of this process may take it. */
  done(companyId: string, key: string): void {
    this.held.delete(`${companyId} ${key}`);
  }

  /** The answer a write refused with, kept for the key's retries (or the key freed: see settleKey). */
  settle(companyId: string, held: IdempotencyClaim, err: unknown): Promise<void> {
    return settleKey(this.db, companyId, held, err);
  }
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
