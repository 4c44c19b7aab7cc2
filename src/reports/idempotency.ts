import { sha256 } from '../core/sha256.js';
import type { IncomingMessage } from 'node:http';
import { HttpError, isInvalidKey, refuse } from '../core/errors.js';
import type { Queryable } from '../db/pool.js';

/*
 * Idempotency-Key on POST /reports/new (draft-ietf-httpapi-idempotency-key-header, as Stripe does it):
 * the same key and body within KEY_LIFETIME return the first request's response and write nothing;
 * another body gets 422. The key is stored in the same statement and commit as its report
 * (write-statement.ts), so a key makes at most one report across processes, and a failed write keeps none.
 */

/** How long a key is remembered. */
export const KEY_LIFETIME = '24 hours';

/** A write's Idempotency-Key: the key, and the fingerprint of the body it came with. */
export interface Idempotency {
  key: string;
  print: Buffer;
}

/** What a key kept, as a write sent with it found it: the first request's response, and whether its body was this one. */
export interface Kept {
  status: number;
  response: string;
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

/** The id of the report a kept key responded with; throws its refusal again, or 422 for another body. */
export function replayKept(kept: Kept): string {
  if (!kept.sameBody) throw differentBody();
  if (kept.status !== 200) throw refuse.keptResponse(kept.status, kept.response);
  return kept.response;
}

/**
 * The keys of POST /reports/new in this process: a key held by a request in flight gets 409 for
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

  /** The request that held the key has responded (or failed): another of this process may hold it. */
  done(companyId: string, key: string): void {
    this.held.delete(`${companyId} ${key}`);
  }

  /** The refusal of a write, kept for the key's retries (see keepRefusal). */
  keepRefusal(companyId: string, idempotency: Idempotency, err: unknown): Promise<void> {
    return keepRefusal(this.db, companyId, idempotency, err);
  }
}

const differentBody = () =>
  refuse.unprocessable('this Idempotency-Key was used with a different body: use a new key for a new request');
const inFlight = () =>
  refuse.conflict('a request with this Idempotency-Key is still in flight: retry once it has been answered');

/**
 * Keeps a write's refusal (400, 409) for the key's retries, in a statement of its own (a rare path).
 * A refusal that asks for a retry (429, 5xx, a passing 409) or a revoked API key's keeps nothing: the
 * retry must be written. A key kept meanwhile by another request is left as it is.
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
