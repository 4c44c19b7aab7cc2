import type { ReportInput } from '../api-types.js';
import { INPUT_FIELDS, type Field, type Origin } from './fields.js';
import type { IdempotencyClaim } from './idempotency.js';

/** The write statement of reports, derived from the field catalogue (fields.ts), and a write's input row. */

/** The input's flag that says whether an update replaces a field's columns. */
const replaceFlag = (field: string) => `replace_${field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;

type Write = NonNullable<Field<unknown>['write']>;

/** Every field with how it is written and the name of its replace flag (named once, not per write). */
const FIELDS = INPUT_FIELDS.map(([name, field]) => [name, field.write, field, replaceFlag(name)] as const);
/** Each column's value in the statement: the field's own SQL, or the input row's value of the column's name. */
const columnSql = (write: Write, field: Field<unknown>) =>
  Object.fromEntries(Object.keys(field.columns).map((c) => [c, write.sql?.[c] ?? `i.${c}`]));
/** Each written column with the SQL of its value: the caller's keys, then every field's columns. */
const INSERTED: Record<string, string> = Object.assign(
  { company_id: 'i.company_id', integration_id: 'i.integration_id' },
  ...FIELDS.map(([, write, field]) => columnSql(write, field)),
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
    idem_claim: 'uuid',
  },
  ...FIELDS.map(([, write, field, flag]) => ({
    ...(write.inputs ?? field.columns),
    ...(write.replaces === 'never' ? {} : { [flag]: 'boolean' }),
  })),
);
/** The SET of an update: each replaceable column takes the new value only when its field says so. */
const UPDATED = FIELDS.flatMap(([, write, field, flag]) =>
  write.replaces === 'never'
    ? []
    : Object.keys(field.columns).map((c) => [c, `CASE WHEN i.${flag} THEN EXCLUDED.${c} ELSE reports.${c} END`]),
);

/**
 * The CTEs of a batch in which some write carries an Idempotency-Key (a second statement, so that the
 * writes without one run the statement they always ran).
 */
const HELD = `  ), held AS (
    -- A write sent with an Idempotency-Key commits only while its request still holds the key
    -- (idempotency.ts): a retry that took the key over meanwhile is the one that writes.
    SELECT c.company_id, c.key FROM idempotency_keys c
     WHERE (c.company_id, c.key, c.claim) IN (SELECT i.company_id, i.idem_key, i.idem_claim FROM i)
     ORDER BY c.company_id, c.key
       FOR UPDATE
  ), claimed AS (
    SELECT i.ord FROM i WHERE i.idem_claim IS NULL OR (i.company_id, i.idem_key) IN (SELECT company_id, key FROM held)
`;
const ANSWERED = `  ), answered AS (
    -- The answer of a write sent with an Idempotency-Key, kept for its retries in the write's own commit.
    UPDATE idempotency_keys c SET status = 200, answer = r.id::text, claim = NULL, claimed_until = NULL
      FROM i JOIN r ON r.id = i.new_id OR (r.company_id = i.company_id AND r.rest_id = i.rest_id)
     WHERE c.company_id = i.company_id AND c.key = i.idem_key AND c.claim = i.idem_claim
`;

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
export const upsertStatement = (idempotency: boolean) => `
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
${idempotency ? HELD : ''}  ), wanted AS (
    -- Each address once, at its first occurrence, as sent; folded by lower(), as users_company_email_key
    -- folds (JavaScript's toLowerCase() differs, e.g. for İ): one rule for what "the same address" is.
    SELECT DISTINCT ON (i.ord, lower(w.email)) i.ord, w.email, w.n
      FROM i, unnest(i.inspectors) WITH ORDINALITY AS w(email, n)
     ORDER BY i.ord, lower(w.email), w.n
  ), found AS (
    SELECT w.ord, w.n, u.name, u.email
      FROM wanted w JOIN i ON i.ord = w.ord
      JOIN users u ON u.company_id = i.users_of AND lower(u.email) = lower(w.email)
  ), r AS (
    INSERT INTO reports (id, ${Object.keys(INSERTED).join(', ')})
    SELECT i.new_id, ${Object.values(INSERTED).join(', ')}
      FROM i
     WHERE (SELECT count(*) FROM found f WHERE f.ord = i.ord) = (SELECT count(*) FROM wanted w WHERE w.ord = i.ord)
       AND i.ord IN (SELECT ord FROM keyed)${idempotency ? ' AND i.ord IN (SELECT ord FROM claimed)' : ''}
     ORDER BY i.company_id, i.rest_id
    ON CONFLICT ON CONSTRAINT reports_company_rest_id_key DO UPDATE
       SET (${UPDATED.map(([c]) => c).join(', ')}, updated_at) =
           (SELECT ${UPDATED.map(([, sql]) => sql).join(',\n                   ')},
                   clock_timestamp()
              FROM i WHERE i.new_id = EXCLUDED.id)
     WHERE reports.status <> 'published' AND NOT coalesce(reports.publish_claimed_until > clock_timestamp(), false)
    RETURNING id, company_id, rest_id, (xmax = 0) AS created
${idempotency ? ANSWERED : ''}  )
  SELECT r.id, r.created, i.ord IN (SELECT ord FROM keyed) AS authorized,
         ${idempotency ? 'i.ord IN (SELECT ord FROM claimed)' : 'true'} AS held,
         ARRAY(SELECT w.email FROM wanted w
                WHERE w.ord = i.ord AND NOT EXISTS (SELECT FROM found f WHERE f.ord = w.ord AND f.n = w.n)
                ORDER BY w.n) AS unknown
    FROM i LEFT JOIN r ON r.id = i.new_id OR (r.company_id = i.company_id AND r.rest_id = i.rest_id)
   ORDER BY i.ord`;

/** A write's input row (all but its `ord`); throws 400 for a field the statement must not see (bad invoice items). */
export function inputRow(origin: Origin, input: ReportInput, idempotency?: IdempotencyClaim): Record<string, unknown> {
  const row: Record<string, unknown> = {
    company_id: origin.companyId,
    // The users a sandbox's reports name are its company's.
    users_of: origin.accountId ?? origin.companyId,
    integration_id: origin.integrationId ?? null,
    key_id: origin.keyId ?? null,
    idem_key: idempotency?.key ?? null,
    idem_claim: idempotency?.claim ?? null,
  };
  for (const [name, write, , flag] of FIELDS) {
    Object.assign(row, write.params(input[name], origin));
    if (write.replaces !== 'never') row[flag] = write.replaces(input[name], origin);
  }
  return row;
}
