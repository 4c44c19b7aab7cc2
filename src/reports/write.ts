import type { ReportInput } from '../api-types.js';
import { Batcher } from '../db/batcher.js';
import type { Pool, Queryable } from '../db/pool.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { badRequest, conflict, unavailable, type HttpError } from '../core/errors.js';
import { quoted } from '../core/quoted.js';
import { INVOICE_ITEM_SHAPE, parseInvoiceItem, toList } from './field-values.js';
import { isUuid } from '../core/ids.js';

/** The writes of a report: create or update (one prepared statement, in batches), and starting it. Reads are in reports.ts. */

export const DEFAULT_FROM_REST_SERVICE = 'REST API';

function parseInvoiceItems(value: ReportInput['invoiceItems']) {
  return toList(value).map((text, i) => {
    const item = parseInvoiceItem(text);
    if (!item) throw badRequest(`invoiceItems[${i}] ${INVOICE_ITEM_SHAPE}`);
    return item;
  });
}

export interface Origin {
  companyId: string;
  /** The API integration whose key made the call; undefined for the application. */
  integrationId?: string;
  /**
   * The API key that made the call (undefined for the application): the write commits only if the key
   * still exists then, for it was checked before a body that may take long to arrive.
   */
  keyId?: string;
}

/** How one field of ReportInput is written by a create or update. */
interface FieldWrite<V> {
  /** Each column the field writes, with the SQL of its value (from the write's input row, `i`). */
  columns: Record<string, string>;
  /** The field's values in the input row, by name, with their SQL types. */
  types: Record<string, string>;
  /** The field's values, by name, from its value (undefined when absent) and the caller. */
  params(value: V, origin: Origin): Record<string, unknown>;
  /** Whether an update replaces the stored columns; 'never' for the restId, which finds the report. */
  replaces: 'never' | ((value: V, origin: Origin) => boolean);
}

/** A field written to one column, as its value converted; the input's value is named after the column. */
function column<V>(
  name: string,
  type: string,
  convert: (value: V, origin: Origin) => unknown,
  replaces: FieldWrite<NoInfer<V>>['replaces'],
): FieldWrite<V> {
  return {
    columns: { [name]: `i.${name}` },
    types: { [name]: type },
    params: (value, origin) => ({ [name]: convert(value, origin) }),
    replaces,
  };
}

/** Merge semantics: a field sent replaces the stored value ("" and [] clear it), an absent one keeps it. */
const sent = (value: unknown) => value !== undefined;
const always = () => true;
const text = (value: string | undefined) => value ?? '';
/** The input's flag that says whether an update replaces a field's columns. */
const replaceFlag = (field: string) => `replace_${field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;

/**
 * Every field of ReportInput and how it is written: the one place to extend when the input gains a
 * field (with openapi.yaml and a migration); its type wants an entry for each field, so a field added
 * to the document fails the type check until it has one. An absent field is written as its empty
 * value on create and kept on update. The order is the order of checks: the first bad field is the one
 * reported.
 */
const WRITES: { [F in keyof ReportInput]-?: FieldWrite<ReportInput[F]> } = {
  restId: column('rest_id', 'text', (value) => value ?? null, 'never'),
  // Set on every report made through the API (default "REST API"), kept on update unless sent non-blank.
  fromRestService: column(
    'from_rest_service',
    'text',
    (value, { integrationId }) => (integrationId === undefined ? '' : value?.trim() || DEFAULT_FROM_REST_SERVICE),
    (value, { integrationId }) => integrationId !== undefined && Boolean(value?.trim()),
  ),
  // The schema guarantees a non-blank name (Names: pattern and contains).
  clientNames: column('client_names', 'text[]', toList, always),
  inspectionDate: column('inspection_date', 'date', (value) => value, always),
  clientEmails: column('client_emails', 'text[]', toList, sent),
  clientPhones: column('client_phones', 'text[]', toList, sent),
  address: column('address', 'text', text, sent),
  yearBuilt: column('year_built', 'text', text, sent),
  squareFeet: column('square_feet', 'text', text, sent),
  notes: column('notes', 'text', text, sent),
  agentName: column('agent_name', 'text', text, sent),
  agentEmail: column('agent_email', 'text', (value) => text(value).trim(), sent),
  agentPhone: column('agent_phone', 'text', text, sent),
  invoiceItems: {
    columns: { invoice_descriptions: 'i.invoice_descriptions', invoice_prices: 'i.invoice_prices' },
    types: { invoice_descriptions: 'text[]', invoice_prices: 'bigint[]' },
    params(value) {
      const items = parseInvoiceItems(value);
      return { invoice_descriptions: items.map((i) => i.description), invoice_prices: items.map((i) => i.priceCents) };
    },
    replaces: sent,
  },
  // The addresses are matched to the company's users (`found` in UPSERT): each inspector is recorded as
  // that user's name and stored address.
  inspectorEmails: {
    columns: {
      inspector_names: 'ARRAY(SELECT f.name FROM found f WHERE f.ord = i.ord ORDER BY f.n)',
      inspector_emails: 'ARRAY(SELECT f.email FROM found f WHERE f.ord = i.ord ORDER BY f.n)',
    },
    types: { inspectors: 'text[]' },
    // As sent: PostgreSQL alone folds case (`wanted` in UPSERT), as the users' unique index does.
    params: (value) => ({ inspectors: toList(value) }),
    replaces: sent,
  },
};

/** Every field with how it is written and the name of its replace flag (named once, not per write). */
const FIELDS = (Object.entries(WRITES) as [keyof ReportInput, FieldWrite<unknown>][]).map(
  ([field, write]) => [field, write, replaceFlag(field)] as const,
);
/** Each written column with the SQL of its value: the caller's keys, then every field's columns. */
const INSERTED: Record<string, string> = Object.assign(
  { company_id: 'i.company_id', integration_id: 'i.integration_id' },
  ...FIELDS.map(([, write]) => write.columns),
);
/** The input row of a write: its position in the batch, the caller's keys, the fields' values and flags. */
const INPUT_TYPES: Record<string, string> = Object.assign(
  { ord: 'int', company_id: 'uuid', integration_id: 'uuid', key_id: 'uuid' },
  ...FIELDS.map(([, write, flag]) => ({
    ...write.types,
    ...(write.replaces === 'never' ? {} : { [flag]: 'boolean' }),
  })),
);
/** The SET of an update: each replaceable column takes the new value only when its field says so. */
const UPDATED = FIELDS.flatMap(([, write, flag]) =>
  write.replaces === 'never'
    ? []
    : Object.keys(write.columns).map((c) => [c, `CASE WHEN i.${flag} THEN EXCLUDED.${c} ELSE reports.${c} END`]),
);

/**
 * Creates and updates of any number of reports in one statement, the same text for every batch
 * (prepared once per connection: planning it costs PostgreSQL as much as running it), atomic as a
 * whole, each write decided on its own: match its inspectors; write its report only if all of them
 * are users (and, on a restId conflict, only if it is neither published nor being published),
 * replacing each column whose field's replace flag is set, and only while the API key that sent it
 * exists (`k`, locked until the commit: a revocation waits for it, or was committed before and the
 * write writes nothing). The input is one JSON array of rows
 * (`i`, in order `ord`); the answer is one row per input row. Writes take their rows' locks in the
 * order of (company, restId), so two batches never wait on each other in a cycle. A batch never holds
 * two writes of one restId (ON CONFLICT cannot touch a row twice): ReportWriter keeps them apart.
 */
const UPSERT = `
  WITH i AS MATERIALIZED (
    SELECT i.*, gen_random_uuid() AS new_id
      FROM jsonb_to_recordset($1::jsonb) AS i(${Object.entries(INPUT_TYPES)
        .map(([name, type]) => `${name} ${type}`)
        .join(', ')})
  ), k AS (
    -- FOR KEY SHARE: a revocation (DELETE) waits for this commit, yet recording a key's use (an UPDATE
    -- of another column) does not; a key deleted meanwhile is not found. In primary-key order, the
    -- order a revocation of several keys by that index takes them in (any other cycle PostgreSQL ends
    -- as a deadlock, and the batch's writes then run again alone).
    SELECT a.company_id, a.id FROM api_keys a
     WHERE (a.company_id, a.id) IN (SELECT i.company_id, i.key_id FROM i)
     ORDER BY a.company_id, a.id
       FOR KEY SHARE
  ), keyed AS (
    SELECT i.ord FROM i WHERE i.key_id IS NULL OR (i.company_id, i.key_id) IN (SELECT company_id, id FROM k)
  ), wanted AS (
    -- Each address once, at its first occurrence, as sent; folded by lower(), as users_company_email_key
    -- folds (JavaScript's toLowerCase() differs, e.g. for İ): one rule for what "the same address" is.
    SELECT DISTINCT ON (i.ord, lower(w.email)) i.ord, w.email, w.n
      FROM i, unnest(i.inspectors) WITH ORDINALITY AS w(email, n)
     ORDER BY i.ord, lower(w.email), w.n
  ), found AS (
    SELECT w.ord, w.n, u.name, u.email
      FROM wanted w JOIN i ON i.ord = w.ord
      JOIN users u ON u.company_id = i.company_id AND lower(u.email) = lower(w.email)
  ), r AS (
    INSERT INTO reports (id, ${Object.keys(INSERTED).join(', ')})
    SELECT i.new_id, ${Object.values(INSERTED).join(', ')}
      FROM i
     WHERE (SELECT count(*) FROM found f WHERE f.ord = i.ord) = (SELECT count(*) FROM wanted w WHERE w.ord = i.ord)
       AND i.ord IN (SELECT ord FROM keyed)
     ORDER BY i.company_id, i.rest_id
    ON CONFLICT ON CONSTRAINT reports_company_rest_id_key DO UPDATE
       SET (${UPDATED.map(([c]) => c).join(', ')}, updated_at) =
           (SELECT ${UPDATED.map(([, sql]) => sql).join(',\n                   ')},
                   clock_timestamp()
              FROM i WHERE i.new_id = EXCLUDED.id)
     WHERE reports.status <> 'published' AND NOT coalesce(reports.publish_claimed_until > clock_timestamp(), false)
    RETURNING id, company_id, rest_id, (xmax = 0) AS created
  )
  SELECT r.id, r.created, i.ord IN (SELECT ord FROM keyed) AS authorized,
         ARRAY(SELECT w.email FROM wanted w
                WHERE w.ord = i.ord AND NOT EXISTS (SELECT FROM found f WHERE f.ord = w.ord AND f.n = w.n)
                ORDER BY w.n) AS unknown
    FROM i LEFT JOIN r ON r.id = i.new_id OR (r.company_id = i.company_id AND r.rest_id = i.rest_id)
   ORDER BY i.ord`;

/** One create or update: who asks, and the input row of UPSERT (all but its `ord`). */
interface Write {
  origin: Origin;
  restId: string | undefined;
  row: Record<string, unknown>;
  /** The row as JSON, for the batch's size. */
  json: string;
}

type Written = { id: string; created: boolean };

/** The write's input row; throws 400 for a field the statement must not see (bad invoice items). */
function toWrite(origin: Origin, input: ReportInput): Write {
  const row: Record<string, unknown> = {
    company_id: origin.companyId,
    integration_id: origin.integrationId ?? null,
    key_id: origin.keyId ?? null,
  };
  for (const [field, write, flag] of FIELDS) {
    Object.assign(row, write.params(input[field], origin));
    if (write.replaces !== 'never') row[flag] = write.replaces(input[field], origin);
  }
  return { origin, restId: input.restId, row, json: JSON.stringify(row) };
}

/**
 * Runs writes as one UPSERT: each write's outcome, in order — its report, or why it was refused (400
 * its key revoked, or unknown inspectors; 409 published or being published, read only then).
 */
async function upsert(db: Queryable, writes: Write[]): Promise<PromiseSettledResult<Written>[]> {
  const input = `[${writes.map((w, ord) => `{"ord":${ord},${w.json.slice(1)}`).join(',')}]`;
  const { rows } = await db.query<{
    id: string | null;
    created: boolean | null;
    authorized: boolean;
    unknown: string[];
  }>({
    name: 'report-upsert',
    text: UPSERT,
    values: [input],
  });
  return Promise.allSettled(
    rows.map(async (row, ord) => {
      const write = writes[ord]!;
      if (!row.authorized) throw badRequest('invalid API key');
      if (row.unknown.length > 0)
        // A list has more room than one id: all of any likely list, and still far under what `error` may hold.
        throw badRequest(`inspectorEmails are not users of this company: ${quoted(row.unknown.join(', '), 1000)}`);
      if (row.id === null) throw await refusedUpdate(db, write.origin.companyId, write.restId!);
      return { id: row.id, created: row.created === true };
    }),
  );
}

/** A statement cut off by statement_timeout: the database answers, it was this statement that was slow. */
const isStatementTimeout = (err: unknown) => (err as { code?: unknown } | null)?.code === '57014';

/**
 * Runs a batch; when its statement fails for anything but the database being unreachable (one write
 * the database refuses, a deadlock with another process, a statement timeout: one write waiting on a
 * row lock holds the whole statement), each write runs again alone, so that one write's fault is never
 * another's.
 */
async function upsertBatch(db: Queryable, writes: Write[]): Promise<PromiseSettledResult<Written>[]> {
  try {
    return await upsert(db, writes);
  } catch (err) {
    if (writes.length === 1 || (isDatabaseUnavailable(err) && !isStatementTimeout(err))) throw err;
    return eachAlone(db, writes);
  }
}

/**
 * Writes of a refused batch re-run alone, RERUN_CONNECTIONS at a time: the write at fault (a row lock,
 * a slow statement) holds one connection while the others go on through the rest, and a large batch
 * never takes the whole pool from the other companies. A batch holds no two writes of one restId, so
 * their order does not matter.
 */
const RERUN_CONNECTIONS = 2;

async function eachAlone(db: Queryable, writes: Write[]): Promise<PromiseSettledResult<Written>[]> {
  const outcomes: PromiseSettledResult<Written>[] = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < writes.length; i = next++) {
      outcomes[i] = await upsert(db, [writes[i]!]).then(
        ([outcome]) => outcome!,
        (reason: unknown): PromiseRejectedResult => ({ status: 'rejected', reason }),
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(RERUN_CONNECTIONS, writes.length) }, worker));
  return outcomes;
}

/**
 * Creates and updates of reports, gathered into batches per company (db/batcher.ts): with no batch
 * of its company in the database a write leaves at once, alone; while one is, the company's writes
 * that arrive wait and leave together, one statement and one commit for all of them. A company has
 * one batch in flight at a time (the measured best for a single company, see README Performance),
 * and its batches never hold another company's writes, so a write waiting on a row lock holds back
 * only its own company; companies' batches run at once up to batchesInFlight, taking turns. Writes
 * of one company's restId never share a batch, and keep their order. A write waits for its turn no
 * longer than a request waits for a connection (then 503, nothing written), and not at all once a
 * batch found the database unreachable: the writes waiting fail with it, as each would after a wait
 * of its own.
 */
export class ReportWriter {
  private readonly batcher: Batcher<Write, Written>;

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
    this.batcher = new Batcher<Write, Written>({
      run: (writes) => upsertBatch(db, writes),
      maxInFlight: batchesInFlight,
      maxItems: WRITE_BATCH_ITEMS,
      maxBytes: WRITE_BATCH_BYTES,
      size: (write) => write.json.length,
      group: (write) => write.origin.companyId,
      key: (write) => write.restId,
      // Not a statement timeout (57014): the database answers, the writes waiting may well succeed.
      failsWaiting: (err) => isDatabaseUnavailable(err) && !isStatementTimeout(err),
      waitMillis,
      tooLong: () => unavailable('database unavailable'),
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
   * (what the receiver gets is what is published).
   */
  createOrUpdate(origin: Origin, input: ReportInput): Promise<Written> {
    return this.batcher.submit(toWrite(origin, input));
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
    ? conflict(`report with restId ${quoted(restId)} is published and can no longer be updated`)
    : conflict(
        `report with restId ${quoted(restId)} is being published (its webhook delivery is in flight): try again later`,
      );
}

/**
 * Moves a new report to in_progress (an inspector applied a template); a report in progress stays
 * as it is. Answers the status found, or undefined for no such report.
 */
export async function startReport(db: Queryable, companyId: string, reportId: string): Promise<string | undefined> {
  if (!isUuid(reportId)) return undefined;
  const { rows } = await db.query<{ status: string }>(
    `WITH found AS (
       SELECT status FROM reports WHERE company_id = $1 AND id = $2 FOR UPDATE
     ), started AS (
       UPDATE reports SET status = 'in_progress', updated_at = clock_timestamp()
        WHERE company_id = $1 AND id = $2 AND status = 'new'
     )
     SELECT status FROM found`,
    [companyId, reportId],
  );
  return rows[0]?.status;
}
