import type { ReportInput } from '../api-types.js';
import { Batcher } from '../db/batcher.js';
import type { Pool, Queryable } from '../db/pool.js';
import { SentOnce } from '../db/sent-once.js';
import { isDatabaseUnreachable } from '../db/unavailable.js';
import { isSerializationFailure } from '../db/sqlstate.js';
import { refuse, type HttpError } from '../core/errors.js';
import { quoted } from '../core/quoted.js';
import { turnFor } from '../core/loop-turns.js';
import type { Origin } from './fields.js';
import { beingPublished, notUsersOfCompany } from './report-error-wording.js';
import type { Idempotency, Kept } from './idempotency.js';
import { inputRow, UPSERT } from './write-statement.js';
import { isSandboxFull, sandboxFull } from './sandbox.js';

/**
 * The writes of a report's fields: create or update (the one statement of write-statement.ts, in
 * batches). Its status and publish fields change in status.ts; reads are in read.ts.
 */

/** One create or update: who asks, and the input row of UPSERT (all but its `ord`) as JSON. */
interface Write {
  origin: Origin;
  restId: string | undefined;
  /** Sent with an Idempotency-Key: its batch runs the statement that finds and stores keys. */
  keyed: boolean;
  /** The row's JSON, built once as the write arrives: its size in a batch, and its part of the batch's input. */
  json: string;
}

type Written = { id: string; created: boolean };
/** A write's outcome: written, or (sent with an Idempotency-Key the statement found kept) not applied. */
type Outcome = Written | { kept: Kept };

/** The write's input row; throws 400 for a field the statement must not see (bad invoice items). */
function toWrite(origin: Origin, input: ReportInput, idempotency?: Idempotency): Write {
  const json = JSON.stringify(inputRow(origin, input, idempotency));
  return { origin, restId: input.restId, keyed: idempotency !== undefined, json };
}

/**
 * The batch's input: one JSON array of the writes' rows, each with its position in the batch first (`ord`).
 * Built apart from upsert(), whose variables live until the database responds: the rows' texts are the
 * requests', the batch's is sent once (SentOnce) and then held by nothing.
 */
function inputText(writes: Write[]): string {
  return `[${writes.map((w, ord) => `{"ord":${ord},${w.json.slice(1)}`).join(',')}]`;
}

/**
 * Runs writes as one UPSERT (those of one restId applied in their order): each write's outcome, in
 * order — its report, the response its Idempotency-Key kept, or why it was refused (400 its key revoked,
 * or unknown inspectors; 409 published or being published, read only then, once per restId). A write
 * alone that would create a report past its sandbox's bound fails the statement: 409.
 */
async function upsert(db: Queryable, writes: Write[]): Promise<PromiseSettledResult<Outcome>[]> {
  const input = new SentOnce(inputText(writes));
  const idempotency = writes.some((w) => w.keyed);
  const restIds = writes.flatMap((w) => (w.restId === undefined ? [] : [w.restId]));
  const fold = new Set(restIds).size < restIds.length;
  const variant = `${fold ? 'folding' : 'distinct'}${idempotency ? 'Idempotent' : ''}` as const;
  const { rows } = await db
    .query<{
      id: string | null;
      created: boolean | null;
      authorized: boolean;
      unknown: string[];
      /** Of a keyed batch only: the response the write's Idempotency-Key kept (null: none). */
      kept_status?: number | null;
      kept_answer?: string | null;
      same_body?: boolean | null;
    }>({
      name: `report-upsert-${variant}`,
      text: UPSERT[variant],
      values: [input],
    })
    .catch((err: unknown) => {
      // A batch of several runs again write by write (upsertBatch): only a write alone is at fault.
      throw writes.length === 1 && isSandboxFull(err) ? sandboxFull() : err;
    });
  const refusals = new Map<string, Promise<HttpError>>();
  const refusal = ({ origin, restId }: Write) => {
    let why = refusals.get(restId!);
    if (!why) refusals.set(restId!, (why = refusedUpdate(db, origin.companyId, restId!)));
    return why;
  };
  return Promise.allSettled(
    rows.map(async (row, ord) => {
      const write = writes[ord]!;
      // Its API key first: one revoked before the commit gets nothing else, not even a kept response.
      if (!row.authorized) throw refuse.invalidKey();
      // Not applied: the first request with the key has the response, whatever this one's inspectors.
      if (row.kept_status != null)
        return { kept: { status: row.kept_status, response: row.kept_answer!, sameBody: row.same_body === true } };
      if (row.unknown.length > 0) throw refuse.badRequest(notUsersOfCompany(row.unknown));
      if (row.id === null) throw await refusal(write);
      return { id: row.id, created: row.created === true };
    }),
  );
}

/**
 * A statement failed by migration 16's idempotency_key_taken (a serialization failure): a write was
 * applied while another transaction stored its Idempotency-Key. Run again, the write finds the key and
 * its response.
 */
const isKeyTaken = isSerializationFailure;

/**
 * Runs a batch; when its statement fails for anything but the database being unreachable or read-only
 * (one write the database refuses, a deadlock with another process, a statement timeout: one write
 * waiting on a row lock holds the whole statement; an Idempotency-Key stored meanwhile by another
 * process, even for a batch of one), each write runs again alone, once, so that one write's fault is
 * never another's.
 */
async function upsertBatch(db: Queryable, writes: Write[]): Promise<PromiseSettledResult<Outcome>[]> {
  try {
    return await upsert(db, writes);
  } catch (err) {
    if (isDatabaseUnreachable(err)) throw err;
    if (writes.length === 1 && !isKeyTaken(err)) throw err;
    return eachAlone(db, writes);
  }
}

/**
 * Writes of a refused batch re-run alone, RERUN_CONNECTIONS at a time: the write at fault (a row lock,
 * a slow statement) holds one connection while the others go on through the rest, and a large batch
 * never takes the whole pool from the other companies. The writes of one restId run one after the
 * other, in their order; those of different restIds in any order.
 */
const RERUN_CONNECTIONS = 2;

async function eachAlone(db: Queryable, writes: Write[]): Promise<PromiseSettledResult<Outcome>[]> {
  const outcomes: PromiseSettledResult<Outcome>[] = [];
  // Each restId's writes (by their position in the batch), in order; a write without one on its own.
  const chains = new Map<unknown, number[]>();
  writes.forEach((write, i) => {
    const key = write.restId ?? i;
    const chain = chains.get(key);
    if (chain) chain.push(i);
    else chains.set(key, [i]);
  });
  const queue = [...chains.values()];
  const worker = async () => {
    for (let chain = queue.shift(); chain; chain = queue.shift()) {
      for (const i of chain) {
        outcomes[i] = await upsert(db, [writes[i]!]).then(
          ([outcome]) => outcome!,
          (reason: unknown): PromiseRejectedResult => ({ status: 'rejected', reason }),
        );
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(RERUN_CONNECTIONS, queue.length) }, worker));
  return outcomes;
}

/**
 * Creates and updates of reports, gathered into batches per company (db/batcher.ts; docs/decisions.md,
 * "Writes in batches"), so under load one statement and one commit serve many writes, while a company's
 * batch never holds another company's writes. A write waits for its turn no longer than a request waits
 * for a connection (then 503, nothing written).
 */
export class ReportWriter {
  private readonly batcher: Batcher<Write, Outcome>;

  /**
   * batchesInFlight: statements in the database at once, all companies together (default: the pool's
   * size less two, so that reads and the application's calls still find a connection; 1 on anything
   * but a pool); waitMillis: how long a write may wait for its turn (default: the pool's connection
   * timeout).
   */
  constructor(
    db: Queryable,
    {
      batchesInFlight = defaultBatchesInFlight(db),
      waitMillis = (db as Partial<Pool>).options?.connectionTimeoutMillis ?? 5000,
    } = {},
  ) {
    this.batcher = new Batcher<Write, Outcome>({
      run: async (writes) => {
        await turnFor(writes.reduce((sum, w) => sum + w.json.length, 0));
        return upsertBatch(db, writes);
      },
      maxInFlight: batchesInFlight,
      maxItems: WRITE_BATCH_ITEMS,
      maxBytes: WRITE_BATCH_BYTES,
      size: (write) => write.json.length,
      group: (write) => write.origin.companyId,
      key: (write) => write.restId,
      // Not a statement timeout: the database responds, the writes waiting may well succeed.
      failsWaiting: isDatabaseUnreachable,
      waitMillis,
      tooLong: () => refuse.databaseUnavailable(),
    });
  }

  /** Writes waiting for their turn. */
  get waiting(): number {
    return this.batcher.waiting;
  }

  /**
   * Creates a report, or merges the input into the company's report with the same restId.
   * One INSERT … ON CONFLICT decides, so concurrent calls with a new restId still make one report.
   * Throws 400 (nothing written) for unknown inspectors, bad invoice items or a key revoked before the
   * write could commit, 409 for a published report or one whose publish is delivering its webhook
   * (what the receiver gets is what is published). With an Idempotency-Key: the write stores the key
   * with its response, in its own commit; or, when the key already has a response kept (by another
   * process's request too), writes nothing and returns `{ kept }`.
   */
  createOrUpdate(origin: Origin, input: ReportInput): Promise<Written>;
  createOrUpdate(origin: Origin, input: ReportInput, idempotency: Idempotency): Promise<Outcome>;
  createOrUpdate(origin: Origin, input: ReportInput, idempotency?: Idempotency): Promise<Outcome> {
    return this.batcher.submit(toWrite(origin, input, idempotency));
  }
}

/** A pool's size less two (reads and the application's calls keep a connection), at least one. */
function defaultBatchesInFlight(db: Queryable): number {
  const max = (db as Partial<Pool>).options?.max;
  return max === undefined ? 1 : Math.max(1, max - 2);
}

/** Writes in one batch, at most. */
const WRITE_BATCH_ITEMS = 32;
/** A batch's input, at most (JSON characters): a write as large as a whole request body leaves alone. */
const WRITE_BATCH_BYTES = 1024 * 1024;

/** Why an update by restId was refused: published, or a publish delivering its webhook now. Read only then. */
async function refusedUpdate(db: Queryable, companyId: string, restId: string): Promise<HttpError> {
  const { rows } = await db.query<{ status: string }>(
    'SELECT status FROM reports WHERE company_id = $1 AND rest_id = $2',
    [companyId, restId],
  );
  return rows[0]?.status === 'published'
    ? refuse.conflict(`report with restId ${quoted(restId)} is published and can no longer be updated`)
    : refuse.conflictForNow(beingPublished(`report with restId ${quoted(restId)}`));
}
