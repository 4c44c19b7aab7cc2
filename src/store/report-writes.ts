import type { ReportInput } from '../api-types.js';
import { namedParameters } from '../db/named-parameters.js';
import type { Pool, Queryable } from '../db/pool.js';
import { badRequest, conflict, type HttpError } from '../http/errors.js';
import { INVOICE_ITEM_SHAPE, parseInvoiceItem, toList } from '../report-fields.js';
import { isUuid } from './ids.js';

/** The writes of a report: create or update (one prepared statement), and starting it. Reads are in reports.ts. */

export const DEFAULT_FROM_REST_SERVICE = 'REST API';

/** inspectorEmails as the addresses to match, lower-cased, in order, each once. */
function wantedInspectors(value: ReportInput['inspectorEmails']): string[] {
  const wanted: string[] = [];
  for (const email of toList(value)) {
    if (!wanted.includes(email.toLowerCase())) wanted.push(email.toLowerCase());
  }
  return wanted;
}

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
}

/** How one field of ReportInput is written by a create or update. */
interface FieldWrite<V> {
  /** Each column the field writes, with the SQL of its value (parameters referred to by name). */
  columns: Record<string, string>;
  /** The field's parameters, by name, from its value (undefined when absent) and the caller. */
  params(value: V, origin: Origin): Record<string, unknown>;
  /** Whether an update replaces the stored columns; 'never' for the restId, which finds the report. */
  replaces: 'never' | ((value: V, origin: Origin) => boolean);
}

/** The parameters of UPSERT, numbered as its parts are built (at module load). */
const UPSERT_PARAMS = namedParameters();

/** A field written to one column, as its value converted; the parameter is named after the column. */
function column<V>(
  name: string,
  type: string,
  convert: (value: V, origin: Origin) => unknown,
  replaces: FieldWrite<NoInfer<V>>['replaces'],
): FieldWrite<V> {
  return {
    columns: { [name]: UPSERT_PARAMS.ref(name, type) },
    params: (value, origin) => ({ [name]: convert(value, origin) }),
    replaces,
  };
}

/** Merge semantics: a field sent replaces the stored value ("" and [] clear it), an absent one keeps it. */
const sent = (value: unknown) => value !== undefined;
const always = () => true;
const text = (value: string | undefined) => value ?? '';
/** The parameter that says whether an update replaces a field's columns. */
const replaceFlag = (field: string) => `replace_${field}`;

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
    columns: {
      invoice_descriptions: UPSERT_PARAMS.ref('invoice_descriptions', 'text[]'),
      invoice_prices: UPSERT_PARAMS.ref('invoice_prices', 'bigint[]'),
    },
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
      inspector_names: 'ARRAY(SELECT name FROM found ORDER BY ord)',
      inspector_emails: 'ARRAY(SELECT email FROM found ORDER BY ord)',
    },
    params: (value) => ({ inspectors: wantedInspectors(value) }),
    replaces: sent,
  },
};

const FIELDS = Object.entries(WRITES) as [keyof ReportInput, FieldWrite<unknown>][];
/** Each written column with the SQL of its value: the caller's keys, then every field's columns. */
const INSERTED: Record<string, string> = Object.assign(
  { company_id: UPSERT_PARAMS.ref('company_id', 'uuid'), integration_id: UPSERT_PARAMS.ref('integration_id', 'uuid') },
  ...FIELDS.map(([, write]) => write.columns),
);
/** The SET of an update: each replaceable column takes the new value only when its field says so. */
const UPDATED = FIELDS.flatMap(([field, write]) =>
  write.replaces === 'never'
    ? []
    : Object.keys(write.columns).map(
        (c) =>
          `${c} = CASE WHEN ${UPSERT_PARAMS.ref(replaceFlag(field), 'boolean')} THEN EXCLUDED.${c} ELSE reports.${c} END`,
      ),
);
const INSPECTORS = UPSERT_PARAMS.ref('inspectors', 'text[]');

/**
 * The whole create or update in one statement, the same text for every input (prepared once per
 * connection: planning it cost PostgreSQL about 0.4 ms, as much as running it), atomic on its own:
 * match the inspectors; write the report only if all of them are users (and, on a restId conflict,
 * only if it is neither published nor being published), replacing each column whose field's replace
 * flag is set. The report is one row, so concurrent updates of it take turns on its lock and the last
 * one is what it shows.
 */
const UPSERT = `
  WITH wanted AS (
    SELECT w.email, w.ord FROM unnest(${INSPECTORS}) WITH ORDINALITY AS w(email, ord)
  ), found AS (
    SELECT w.email AS wanted, w.ord, u.name, u.email
      FROM wanted w JOIN users u ON u.company_id = ${INSERTED.company_id} AND lower(u.email) = w.email
  ), r AS (
    INSERT INTO reports (${Object.keys(INSERTED).join(', ')})
    SELECT ${Object.values(INSERTED).join(', ')}
     WHERE (SELECT count(*) FROM found) = cardinality(${INSPECTORS})
    ON CONFLICT ON CONSTRAINT reports_company_rest_id_key DO UPDATE
       SET ${UPDATED.join(',\n           ')},
           updated_at = clock_timestamp()
     WHERE reports.status <> 'published' AND NOT coalesce(reports.publish_claimed_until > clock_timestamp(), false)
    RETURNING id, (xmax = 0) AS created
  )
  SELECT r.id, r.created,
         ARRAY(SELECT email FROM wanted WHERE email NOT IN (SELECT wanted FROM found) ORDER BY ord) AS unknown
    FROM (SELECT 1) AS one LEFT JOIN r ON true`;

/**
 * Creates a report, or merges the input into the company's report with the same restId.
 * One INSERT … ON CONFLICT decides, so concurrent calls with a new restId still make one report.
 * Throws 400 (nothing written) for unknown inspectors or bad invoice items, 409 for a published report
 * or one whose publish is delivering its webhook (what the receiver gets is what is published).
 */
export async function createOrUpdate(
  pool: Pool,
  origin: Origin,
  input: ReportInput,
): Promise<{ id: string; created: boolean }> {
  const params: Record<string, unknown> = {
    company_id: origin.companyId,
    integration_id: origin.integrationId ?? null,
  };
  for (const [field, write] of FIELDS) {
    Object.assign(params, write.params(input[field], origin));
    if (write.replaces !== 'never') params[replaceFlag(field)] = write.replaces(input[field], origin);
  }
  const { rows } = await pool.query<{ id: string | null; created: boolean | null; unknown: string[] }>({
    name: 'report-upsert',
    text: UPSERT,
    values: UPSERT_PARAMS.values(params),
  });
  const row = rows[0]!;
  if (row.unknown.length > 0)
    throw badRequest(`inspectorEmails are not users of this company: ${row.unknown.join(', ')}`);
  if (row.id === null) throw await refusedUpdate(pool, origin.companyId, input.restId!);

  return { id: row.id, created: row.created === true };
}

/** Why an update by restId was refused: published, or a publish delivering its webhook now. Read only then. */
async function refusedUpdate(db: Queryable, companyId: string, restId: string): Promise<HttpError> {
  const { rows } = await db.query<{ status: string }>(
    'SELECT status FROM reports WHERE company_id = $1 AND rest_id = $2',
    [companyId, restId],
  );
  return rows[0]?.status === 'published'
    ? conflict(`report with restId ${restId} is published and can no longer be updated`)
    : conflict(`report with restId ${restId} is being published (its webhook delivery is in flight): try again later`);
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
