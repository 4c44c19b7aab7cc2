import { sha256 } from '../core/sha256.js';
import type { IncomingMessage } from 'node:http';
import { HttpError, isInvalidKey, refuse } from '../core/errors.js';
import type { Queryable } from '../db/pool.js';

/**
 * Idempotency-Key on POST /reports/new, as draft-ietf-httpapi-idempotency-key-header has it (and Stripe
 * does): the same key with the same body within KEY_LIFETIME answers what the first request answered
 * and writes nothing; with another body, 422. Keys are per company. The key is taken in the write's own
 * statement (write-statement.ts): a write whose key is kept is not applied and finds the kept answer; a
 * write applied stores its key with its answer in the commit of its report, so a key makes one report at
 * most, across processes, and a write that fails keeps no key. A retry sent while the first request is
 * in flight gets 409 in the same process; in another, its statement waits for the first's commit and
 * answers what it answered (migration 16).
 */

/** How long a key is remembered. */
export const KEY_LIFETIME = '24 hours';

/** A write's Idempotency-Key: the key, and the fingerprint of the body it came with. */
export interface Idempotency {
  key: string;
  print: Buffer;
}

/** What a key kept, as a write sent with it found it: the first request's answer, and whether its body was this one. */
export interface Kept {
  status: number;
  answer: string;
  sameBody: boolean;
}

/**
 * The key of a request's Idempotency-Key: the draft's string form ("…") or, as Stripe's clients send it,
 * bare. The header is one string: sent on several lines, Node would join them with commas into a key no
 * request was sent with (so that a retry of `k` sent with `k` twice would make a second report): 400.
 */
export function idempotencyKey(req: IncomingMessage): string | undefined {
  // headersDistinct is built whole on first use: only a request that has the header needs its lines.
  if (req.headers['idempotency-key'] === undefined) return undefined;
  const lines = req.headersDistinct['idempotency-key'];
  if (lines === undefined) return undefined;
  if (lines.length > 1)
    throw refuse.badRequest(`Idempotency-Key must be sent once: this request has it ${lines.length} times`);
  const header = lines[0]!;
  const quoted = /^"(.*)"$/.exec(header);
  return quoted ? quoted[1] : header;
}

/** The body's fingerprint: its JSON with keys in order, so that the same body sent again matches however it is laid out. */
export function fingerprint(body: unknown): Buffer {
  return sha256(canonicalJson(body));
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The id of the report a kept key answered with; throws its refusal again, or 422 for another body. */
export function answerAgain(kept: Kept): string {
  if (!kept.sameBody) throw differentBody();
  if (kept.status !== 200) throw refuse.keptAnswer(kept.status, kept.answer);
  return kept.answer;
}

/**
 * The keys of POST /reports/new in this process: a key held by a request in flight answers 409 to
 * another request of this process at once, without the database (its statement would wait for the
 * first's commit, holding a connection).
 */
export class IdempotencyKeys {
  /** Keys held by requests of this process, by "<company> <key>". */
  private readonly held = new Set<string>();

  constructor(private readonly db: Queryable) {}

  /** Holds the company's key for this request, or 409 while another request of this process holds it. The caller ends with done(). */
  hold(companyId: string, key: string): void {
    const id = `${companyId} ${key}`;
    if (this.held.has(id)) throw inFlight();
    this.held.add(id);
  }

  /** The request that held the key has answered (or failed): another of this process may hold it. */
  done(companyId: string, key: string): void {
    this.held.delete(`${companyId} ${key}`);
  }

  /** The answer a write was refused with, kept for the key's retries (see keepRefusal). */
  keepRefusal(companyId: string, idempotency: Idempotency, err: unknown): Promise<void> {
    return keepRefusal(this.db, companyId, idempotency, err);
  }
}

const differentBody = () =>
  refuse.unprocessable('this Idempotency-Key was used with a different body: use a new key for a new request');
const inFlight = () =>
  refuse.conflict('a request with this Idempotency-Key is still in flight: retry once it has been answered');

/**
 * Keeps the answer a write was refused with (400, 409) for the key's retries, in a statement of its own
 * after the write's (a rare path). A refusal that asks for a retry (429, 5xx, a 409 of a passing state:
 * a publish in flight, a full sandbox) keeps nothing: the write wrote nothing, or, had it committed after
 * all, it stored its key with its report. Nor does a revoked API key's refusal: it is about who sent the
 * request, and a retry with a valid key must be written. A key kept meanwhile by another request is left
 * as it is; one past its lifetime is replaced.
 */
export async function keepRefusal(
  db: Queryable,
  companyId: string,
  { key, print }: Idempotency,
  err: unknown,
): Promise<void> {
  if (!(err instanceof HttpError) || err.transient || err.status >= 500 || isInvalidKey(err)) return;
  await db.query({
    name: 'idempotency-refused',
    text: `INSERT INTO idempotency_keys AS p (company_id, key, fingerprint, status, answer, expires_at)
           VALUES ($1, $2, $3, $4, $5, clock_timestamp() + interval '${KEY_LIFETIME}')
           ON CONFLICT (company_id, key) DO UPDATE
              SET fingerprint = EXCLUDED.fingerprint, status = EXCLUDED.status, answer = EXCLUDED.answer,
                  expires_at = EXCLUDED.expires_at
            WHERE p.expires_at <= clock_timestamp()`,
    values: [companyId, key, print, err.status, err.message],
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
