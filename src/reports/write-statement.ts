import type { ReportInput } from '../api-types.js';
import { INPUT_FIELDS, type Field, type Origin } from './fields.js';
import { KEY_LIFETIME, type Idempotency } from './idempotency.js';
import { publishInFlight } from './status.js';

/** The write statement of reports, derived from the field catalogue (fields.ts), and a write's input row. */

/** The input's flag that says whether an update replaces a field's columns. */
const replaceFlag = (field: string) => `replace_${field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;

type Write = NonNullable<Field<unknown>['write']>;

/** Every field with how it is written and the name of its replace flag (named once, not per write). */
const WRITABLE_FIELDS = INPUT_FIELDS.map(([name, field]) => [name, field.write, field, replaceFlag(name)] as const);
/** Each column's value in the statement: the field's own SQL, or the input row's value of the column's name. */
const columnSql = (write: Write, field: Field<unknown>) =>
  Object.fromEntries(Object.keys(field.columns).map((c) => [c, write.sql?.[c] ?? `i.${c}`]));
/** Each written column with the SQL of its value: the caller's keys, then every field's columns. */
const INSERTED: Record<string, string> = Object.assign(
  { company_id: 'i.company_id', integration_id: 'i.integration_id' },
  ...WRITABLE_FIELDS.map(([, write, field]) => columnSql(write, field)),
);
/** The input row of a write: its position in the batch, the caller's keys, the fields' values and flags. */
const INPUT_TYPES: Record<string, string> = Object.assign(
  {
    ord: 'int',
    company_id: 'uuid',
    users_of: 'uuid',
    integration_id: 'uuid',
    key_id: 'uuid',
    idem_key: 'text',
    idem_print: 'bytea',
  },
  ...WRITABLE_FIELDS.map(([, write, field, flag]) => ({
    ...(write.inputs ?? field.columns),
    ...(write.replaces === 'never' ? {} : { [flag]: 'boolean' }),
  })),
);
/** The fields an update may replace, each with its flag and columns. */
const REPLACEABLE = WRITABLE_FIELDS.flatMap(([, write, field, flag]) =>
  write.replaces === 'never' ? [] : [{ flag, columns: Object.keys(field.columns) }],
);
/** The columns only the write that creates a report writes: the caller's keys and the restId. */
const CREATE_ONLY = Object.keys(INSERTED).filter((c) => !REPLACEABLE.some((f) => f.columns.includes(c)));
/**
 * Whether write `i` is written: its key still exists, all its inspectors are users (and, sent with an
 * Idempotency-Key, the key has no response kept).
 */
const applied = (idempotency: boolean) =>
  `(SELECT count(*) FROM found f WHERE f.ord = i.ord) = (SELECT count(*) FROM wanted w WHERE w.ord = i.ord)
       AND i.ord IN (SELECT ord FROM keyed)${idempotency ? ' AND i.ord NOT IN (SELECT ord FROM kept)' : ''}`;
/** The writes of one report in a batch: one company's restId, or a write without one alone. */
const REPORT = (a: string) => `${a}.company_id, ${a}.rest_id, ${a}.alone`;

/**
 * `applied`: the writes that are written (their key still exists, all their inspectors are users),
 * each with every column's value as it would write it alone, its replace flags, and whether it is the
 * first of its report's writes in the batch (`creates`: it makes the report when there is none).
 */
function appliedCte(idempotency: boolean): string {
  return `applied AS (
    SELECT i.ord, i.new_id, CASE WHEN i.rest_id IS NULL THEN i.ord END AS alone,
           ${Object.entries(INSERTED)
             .map(([c, sql]) => `${sql} AS ${c}`)
             .join(', ')},
           ${REPLACEABLE.map((f) => `i.${f.flag}`).join(', ')},
           i.ord = min(i.ord) OVER (PARTITION BY i.company_id, i.rest_id, CASE WHEN i.rest_id IS NULL THEN i.ord END) AS creates
      FROM i
     WHERE ${applied(idempotency)}
  )`;
}

/**
 * `folded`: the writes of each report folded into one, as applying them one by one in order would
 * leave it (ON CONFLICT cannot touch a row twice). On the row of the write that creates: each column
 * as the last write that replaces it wrote it (the creating write replaces every column, were the
 * report new), and each replace flag set when any of the report's writes replaces the field.
 * Every write's input is cast in `i`; the table's checks and triggers see the folded row, and its
 * checks hold for any one write's values (a field's columns all come from one write).
 */
function foldedCte(): string {
  const folds = REPLACEABLE.flatMap(({ flag, columns }) => [
    ...columns.map(
      (c) =>
        `first_value(a.${c}) OVER (PARTITION BY ${REPORT('a')}, a.${flag} OR a.creates ORDER BY a.ord DESC) AS ${c}`,
    ),
    `bool_or(a.${flag}) OVER (PARTITION BY ${REPORT('a')}) AS ${flag}`,
  ]);
  return `folded AS (
    SELECT a.ord, a.new_id, a.creates, ${CREATE_ONLY.map((c) => `a.${c}`).join(', ')},
           ${folds.join(',\n           ')}
      FROM applied a
  )`;
}

/**
 * `r`: each report's folded write, creating it or merged into it (each column replaced only when a
 * write replaces its field), unless it is published or being published.
 */
function writtenCte(fold: boolean, idempotency: boolean): string {
  const columns = Object.keys(INSERTED);
  // Folded: each report's folded write (`f`); else each write applied, straight from the input (`i`).
  const [w, source, rows, values] = fold
    ? ['f', 'folded f', 'folded f WHERE f.creates', columns.map((c) => `f.${c}`)]
    : ['i', 'i', `i WHERE ${applied(idempotency)}`, Object.values(INSERTED)];
  const updated = REPLACEABLE.flatMap(({ flag, columns }) =>
    columns.map((c) => [c, `CASE WHEN ${w}.${flag} THEN EXCLUDED.${c} ELSE reports.${c} END`] as const),
  );
  return `r AS (
    INSERT INTO reports (id, ${columns.join(', ')})
    SELECT ${w}.new_id, ${values.join(', ')}
      FROM ${rows}
     ORDER BY ${w}.company_id, ${w}.rest_id
    ON CONFLICT ON CONSTRAINT reports_company_rest_id_key DO UPDATE
       SET (${updated.map(([c]) => c).join(', ')}, updated_at) =
           (SELECT ${updated.map(([, sql]) => sql).join(',\n                   ')},
                   clock_timestamp()
              FROM ${source} WHERE ${w}.new_id = EXCLUDED.id)
     WHERE reports.status <> 'published' AND NOT ${publishInFlight('reports')}
    RETURNING id, company_id, rest_id, (xmax = 0) AS created
  )`;
}

/**
 * The CTEs of a batch in which some write carries an Idempotency-Key (idempotency.ts). `kept`: the
 * response its key keeps, if any (an earlier request's, within the key's lifetime): that write is not
 * applied, and returns the kept response again (column `answer`).
 */
const KEPT = `  ), kept AS (
    -- An index probe per keyed write, always (migration 16: a join on the table, or a generic plan made
    -- while it was small, is a scan of all of it).
    SELECT i.ord, p.status, p.answer, p.fingerprint = i.idem_print AS same_body
      FROM i, LATERAL idempotency_key_kept(i.company_id, i.idem_key) p
     WHERE i.idem_key IS NOT NULL
`;
/**
 * `stored`: the key of each keyed write written, with its response, in the statement (and so the commit)
 * of its report: both stand or neither does. A key past its lifetime (not yet swept) is replaced. A live
 * one is another request's, committed after this statement's snapshot (ON CONFLICT waited for it): it is
 * left as it is, not returned, and the statement fails (the final SELECT's `key_stored`).
 */
const STORED = `, stored AS (
    INSERT INTO idempotency_keys AS p (company_id, key, fingerprint, status, answer, expires_at)
    SELECT i.company_id, i.idem_key, i.idem_print, 200, r.id::text, clock_timestamp() + interval '${KEY_LIFETIME}'
      FROM i JOIN r ON r.id = i.new_id OR (r.company_id = i.company_id AND r.rest_id = i.rest_id)
     WHERE i.idem_key IS NOT NULL AND ${applied(true)}
     -- Sorted, so every report row is locked before any key's, and the keys in one order.
     ORDER BY i.company_id, i.idem_key
    ON CONFLICT (company_id, key) DO UPDATE
       SET fingerprint = EXCLUDED.fingerprint, status = EXCLUDED.status, answer = EXCLUDED.answer,
           expires_at = EXCLUDED.expires_at
     WHERE p.expires_at <= clock_timestamp()
    RETURNING p.company_id, p.key
  )`;
/**
 * The final SELECT's columns of a keyed batch: the response a write's key kept, and `key_stored`, true
 * for every write, or an error that fails the statement (SQLSTATE 40001, migration 16) when a write was
 * written but its key not stored.
 */
const KEPT_COLUMNS = `kept.status AS kept_status, kept.answer AS kept_answer, kept.same_body,
         CASE WHEN i.idem_key IS NULL OR r.id IS NULL OR (i.company_id, i.idem_key) IN (SELECT company_id, key FROM stored)
              THEN true ELSE idempotency_key_taken(i.idem_key) END AS key_stored`;

/**
 * Creates and updates of any number of reports in one prepared statement, each write decided on its
 * own: written only if all its inspectors are users and its API key still exists (`k`, locked until
 * the commit, so a revocation waits for it). Writes of one restId are folded, in order, into one write
 * (`folded`). Input: one JSON array of rows (`i`, by `ord`); result: one row per input row. Locks are
 * taken in (company, restId) then (company, key) order, so two batches never wait on each other in a cycle.
 */
function upsertSql(fold: boolean, idempotency: boolean): string {
  return `
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
${idempotency ? KEPT : ''}  ), wanted AS (
    -- Each address once, at its first occurrence, as sent; folded by lower(), as users_company_email_key
    -- folds (JavaScript's toLowerCase() differs, e.g. for İ): one rule for what "the same address" is.
    SELECT DISTINCT ON (i.ord, lower(w.email)) i.ord, w.email, w.n
      FROM i, unnest(i.inspectors) WITH ORDINALITY AS w(email, n)
     ORDER BY i.ord, lower(w.email), w.n
  ), found AS (
    SELECT w.ord, w.n, u.name, u.email
      FROM wanted w JOIN i ON i.ord = w.ord
      JOIN users u ON u.company_id = i.users_of AND lower(u.email) = lower(w.email)
  ), ${fold ? `${appliedCte(idempotency)}, ${foldedCte()}, ` : ''}${writtenCte(fold, idempotency)}${idempotency ? STORED : ''}
  SELECT r.id, r.created AND r.id = i.new_id AS created, i.ord IN (SELECT ord FROM keyed) AS authorized,
         ${idempotency ? `${KEPT_COLUMNS},` : ''}
         ARRAY(SELECT w.email FROM wanted w
                WHERE w.ord = i.ord AND NOT EXISTS (SELECT FROM found f WHERE f.ord = w.ord AND f.n = w.n)
                ORDER BY w.n) AS unknown
    FROM i LEFT JOIN r ON ${fold ? 'i.ord IN (SELECT ord FROM applied) AND ' : ''}(r.id = i.new_id OR (r.company_id = i.company_id AND r.rest_id = i.rest_id))${idempotency ? '\n    LEFT JOIN kept ON kept.ord = i.ord' : ''}
   ORDER BY i.ord`;
}

/**
 * The statement, in four texts: `folding` for any batch, `distinct` (each write applied straight from
 * the input, without `applied` and `folded`, whose window sorts cost PostgreSQL per field) for a
 * batch in which no two writes have one restId; each also `…Idempotent` for a batch in which a write
 * carries an Idempotency-Key (kept responses found, keys stored with the writes' responses), so that the
 * writes without one run the statement they always ran.
 */
export const UPSERT = {
  folding: upsertSql(true, false),
  distinct: upsertSql(false, false),
  foldingIdempotent: upsertSql(true, true),
  distinctIdempotent: upsertSql(false, true),
};

/** A write's input row (all but its `ord`); throws 400 for a field the statement must not see (bad invoice items). */
export function inputRow(origin: Origin, input: ReportInput, idempotency?: Idempotency): Record<string, unknown> {
  const row: Record<string, unknown> = {
    company_id: origin.companyId,
    // The users a sandbox's reports name are its owner's.
    users_of: origin.ownerCompanyId ?? origin.companyId,
    integration_id: origin.integrationId ?? null,
    key_id: origin.keyId ?? null,
    idem_key: idempotency?.key ?? null,
    // bytea's hex input form, as jsonb_to_recordset reads it.
    idem_print: idempotency ? `\\x${idempotency.print.toString('hex')}` : null,
  };
  for (const [name, write, , flag] of WRITABLE_FIELDS) {
    Object.assign(row, write.params(input[name], origin));
    if (write.replaces !== 'never') row[flag] = write.replaces(input[name], origin);
  }
  return row;
}
