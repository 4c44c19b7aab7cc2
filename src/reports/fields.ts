import type { Report, ReportInput } from '../api-types.js';
import { isoTimestamp } from '../db/iso-timestamp.js';
import { formatInvoiceItem, joinList, parseInvoiceItems, toList } from './field-values.js';

/**
 * The field catalogue: one row per field of a report, the one place to extend when the report gains
 * a field (with openapi.yaml and a migration adding its column). Everything else is derived from it:
 * the write statement (write-statement.ts), the reads (read.ts), the display_bytes column's functions
 * (display-bytes.ts, written into migrations from `npm run gen`'s generated/report-display-bytes.sql),
 * the sample report (sample.ts) and the benchmark yardstick's mapping. test/reports/field-catalogue.unit.test.ts
 * fails when this catalogue, openapi.yaml's ReportInput and Report, and the reports table disagree.
 */

/** Who writes: the company, and for the partner API the integration and key that made the call. */
export interface Origin {
  companyId: string;
  /** The API integration whose key made the call; undefined for the application. */
  integrationId?: string;
  /**
   * The API key that made the call (undefined for the application): the write commits only if the key
   * still exists then, for it was checked before a body that may take long to arrive.
   */
  keyId?: string;
  /**
   * The company that owns the API key (for a test key, the sandbox's owner): its users are the inspectors
   * a report may name. Undefined for the application, which writes as the company itself.
   */
  ownerCompanyId?: string;
}

/** A stored report as read (read.ts selects every catalogue column by name). */
export type ReportRow = Record<string, unknown>;

export type SqlType = 'text' | 'text[]' | 'date' | 'bigint[]';

/** One field of a report, from the input it is written from to the output it is shown as. */
export interface Field<V> {
  /** Its columns in the reports table, with their SQL types. */
  columns: Record<string, SqlType>;
  /** How a create or update writes it (fields of ReportInput only). */
  write?: {
    /** The field's values in the write's input row, with their SQL types (default: the columns). */
    inputs?: Record<string, string>;
    /** Each column's value in the write statement (default: the input row's value of that name, `i.<column>`). */
    sql?: Record<string, string>;
    /** The input row's values from the field's value (undefined when absent) and the caller. */
    params(value: V, origin: Origin): Record<string, unknown>;
    /** Whether an update replaces the stored columns; 'never' for the restId, which finds the report. */
    replaces: 'never' | ((value: V, origin: Origin) => boolean);
  };
  /** How each column is selected, when not as itself (`r.<column>`). */
  read?: Record<string, string>;
  /** The output fields it is shown as, from the row read. */
  output(row: ReportRow): Partial<Report>;
  /** Its term in display_bytes (SQL over its columns): about what it adds to the report's JSON. */
  displayBytes?: string;
  /** Its output in the sample report that test deliveries carry, dated `at`. */
  sample(at: Date): Partial<Report>;
}

/** Merge semantics: a field sent replaces the stored value ("" and [] clear it), an absent one keeps it. */
const sent = (value: unknown): boolean => value !== undefined;
const always = (): boolean => true;
const DEFAULT_FROM_REST_SERVICE = 'REST API';

/**
 * Whether a report came through the API: its fromRestService is '' exactly when it was made in the
 * application, since every API write stores the service's name, trimmed, or DEFAULT_FROM_REST_SERVICE.
 */
export const cameThroughApi = (report: Pick<Report, 'fromRestService'>): boolean => report.fromRestService !== '';

const json = (column: string) => `json_bytes(${column})`;

/** A field kept as one text column, shown as it is. */
function text(
  column: string,
  output: keyof Report,
  sample: string,
  clean = (v: string) => v,
): Field<string | undefined> {
  return {
    columns: { [column]: 'text' },
    write: { params: (value) => ({ [column]: clean(value ?? '') }), replaces: sent },
    output: (row) => ({ [output]: row[column] as string }),
    displayBytes: json(column),
    sample: () => ({ [output]: sample }),
  };
}

/** A field of several values kept as a text[] column, shown joined with ", ". */
function list(
  column: string,
  output: keyof Report,
  sample: string[],
  replaces: (value: unknown) => boolean = sent,
): Field<string | string[] | undefined> {
  return {
    columns: { [column]: 'text[]' },
    write: { params: (value) => ({ [column]: toList(value) }), replaces },
    output: (row) => ({ [output]: joinList(row[column] as string[]) }),
    displayBytes: json(column),
    sample: () => ({ [output]: joinList(sample) }),
  };
}

/** The fields a report has that no input writes: set by the service and the inspectors' application. */
type SystemField = 'id' | 'publishedUrl' | 'status' | 'createdAt' | 'updatedAt';

/**
 * The id of the sample report that test deliveries carry. No report ever has it: report ids come
 * from gen_random_uuid(), whose 122 random bits are never all zero in practice, and it is never
 * inserted, so a receiver that looks it up finds nothing.
 */
export const SAMPLE_REPORT_ID = '00000000-0000-4000-8000-000000000000';

/**
 * Every field of a report, in the order the API shows them (and display_bytes sums them): each field
 * of ReportInput under its input name, each other field of Report under its output name. Its type
 * wants a row for each field of ReportInput, so a field added to the document fails the type check
 * until it has one.
 */
export const FIELDS = {
  id: { columns: {}, output: (row) => ({ id: row.id as string }), sample: () => ({ id: SAMPLE_REPORT_ID }) },
  address: text('address', 'address', '12 Elm Street, Springfield, IL 62701'),
  // The schema guarantees a non-blank name (Names: pattern and contains).
  clientNames: list('client_names', 'clientName', ['Jordan Smith', 'Casey Smith'], always),
  clientEmails: list('client_emails', 'clientEmail', ['jordan@example.com', 'casey@example.com']),
  clientPhones: list('client_phones', 'clientPhone', ['+1 555 0100']),
  agentName: text('agent_name', 'agentName', 'Riley Agent'),
  agentEmail: text('agent_email', 'agentEmail', 'riley@example.com', (v) => v.trim()),
  agentPhone: text('agent_phone', 'agentPhone', '+1 555 0199'),
  // The addresses are matched to the company's users (`found` in the write statement): each inspector
  // is recorded as that user's name and stored address.
  inspectorEmails: {
    columns: { inspector_names: 'text[]', inspector_emails: 'text[]' },
    write: {
      inputs: { inspectors: 'text[]' },
      sql: {
        inspector_names: 'ARRAY(SELECT f.name FROM found f WHERE f.ord = i.ord ORDER BY f.n)',
        inspector_emails: 'ARRAY(SELECT f.email FROM found f WHERE f.ord = i.ord ORDER BY f.n)',
      },
      // As sent: PostgreSQL alone folds case (`wanted` in the write statement), as the users' unique index does.
      params: (value) => ({ inspectors: toList(value) }),
      replaces: sent,
    },
    output: (row) => ({
      inspectorName: joinList(row.inspector_names as string[]),
      inspectorEmail: joinList(row.inspector_emails as string[]),
    }),
    displayBytes: 'json_bytes(inspector_names) + json_bytes(inspector_emails)',
    sample: () => ({ inspectorName: 'Dana Inspector', inspectorEmail: 'dana@example.com' }),
  },
  notes: text('notes', 'inspectorNotes', 'A sample report sent by a test delivery; it exists nowhere.'),
  inspectionDate: {
    columns: { inspection_date: 'date' },
    write: { params: (value) => ({ inspection_date: value }), replaces: always },
    read: { inspection_date: "to_char(r.inspection_date, 'YYYY-MM-DD')" },
    output: (row) => ({ inspectionDate: `${row.inspection_date as string}T00:00:00.000Z` }),
    sample: (at) => ({ inspectionDate: `${at.toISOString().slice(0, 10)}T00:00:00.000Z` }),
  },
  // Set on every report made through the API (default "REST API"), kept on update unless sent non-blank.
  fromRestService: {
    columns: { from_rest_service: 'text' },
    write: {
      params: (value, { integrationId }) => ({
        from_rest_service: integrationId === undefined ? '' : value?.trim() || DEFAULT_FROM_REST_SERVICE,
      }),
      replaces: (value, { integrationId }) => integrationId !== undefined && Boolean(value?.trim()),
    },
    output: (row) => ({ fromRestService: row.from_rest_service as string }),
    displayBytes: json('from_rest_service'),
    sample: () => ({ fromRestService: DEFAULT_FROM_REST_SERVICE }),
  },
  restId: {
    columns: { rest_id: 'text' },
    write: { params: (value) => ({ rest_id: value ?? null }), replaces: 'never' },
    output: (row) => ({ restId: (row.rest_id as string | null) ?? '' }),
    displayBytes: "json_bytes(coalesce(rest_id, ''))",
    sample: () => ({ restId: 'sample' }),
  },
  publishedUrl: {
    columns: { published_url: 'text' },
    output: (row) => ({ publishedUrl: row.published_url as string }),
    displayBytes: json('published_url'),
    sample: () => ({ publishedUrl: 'https://reports.example.com/sample' }),
  },
  status: {
    columns: {},
    output: (row) => ({ status: row.status as Report['status'] }),
    sample: () => ({ status: 'published' }),
  },
  yearBuilt: text('year_built', 'yearBuilt', '1987'),
  squareFeet: text('square_feet', 'squareFeet', '2150'),
  invoiceItems: {
    columns: { invoice_descriptions: 'text[]', invoice_prices: 'bigint[]' },
    write: {
      params(value) {
        const items = parseInvoiceItems(value);
        return {
          invoice_descriptions: items.map((i) => i.description),
          invoice_prices: items.map((i) => i.priceCents),
        };
      },
      replaces: sent,
    },
    output: (row) => ({
      // Text from a row, numbers from the JSON of a list page: both go through Number().
      invoiceItems: (row.invoice_descriptions as string[]).map((description, i) =>
        formatInvoiceItem({ description, priceCents: Number((row.invoice_prices as unknown[])[i]) }),
      ),
    }),
    // Each item's ": $1,250.00" is at most 20 bytes more than its description.
    displayBytes: 'json_bytes(invoice_descriptions) + 20 * cardinality(invoice_descriptions)',
    sample: () => ({ invoiceItems: ['Home inspection: $450.00', 'Radon test: $150.00'] }),
  },
  createdAt: {
    columns: {},
    read: { created_at: isoTimestamp('r.created_at') },
    output: (row) => ({ createdAt: row.created_at as string }),
    sample: (at) => ({ createdAt: at.toISOString() }),
  },
  updatedAt: {
    columns: {},
    read: { updated_at: isoTimestamp('r.updated_at') },
    output: (row) => ({ updatedAt: row.updated_at as string }),
    sample: (at) => ({ updatedAt: at.toISOString() }),
  },
} satisfies { [F in keyof ReportInput]-?: Field<ReportInput[F]> } & Record<SystemField, Field<never>>;

/** Every field with its name, in the order the API shows them. */
export const ALL_FIELDS = Object.entries(FIELDS) as [string, Field<never>][];

/** The fields of ReportInput with how each is written. */
export const INPUT_FIELDS = ALL_FIELDS.filter(([, field]) => field.write !== undefined) as [
  keyof ReportInput,
  Field<unknown> & Required<Pick<Field<unknown>, 'write'>>,
][];
