import fc from 'fast-check';
import type { generateSync as GenerateSync } from 'json-schema-faker';
import { partnerDocument } from './partner-document.js';

/**
 * Request generators for the partner operations, from the partner document's schemas.
 * json-schema-faker makes schema-valid values from a fast-check seed; fast-check adds what the
 * schema cannot say (business rules) and the mutations that make a valid request invalid.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Body = { [key: string]: Json };

const components = partnerDocument.components as Record<string, unknown>;
const reportInput = (components.schemas as Record<string, { properties: Record<string, Record<string, unknown>> }>)
  .ReportInput!;
export const REPORT_FIELDS = Object.keys(reportInput.properties);

let generateSync: typeof GenerateSync | undefined;

/**
 * Loads json-schema-faker. It is imported on demand because a static import of it, in a spec file's
 * import graph, kept mocha from running the harness's global setup (observed with mocha 12).
 */
export async function loadSchemaFaker(): Promise<void> {
  ({ generateSync } = await import('json-schema-faker'));
}

/** Values the schema describes, seeded by fast-check so that a failure can be replayed. */
const fromSchema = (ref: string) =>
  fc.integer({ min: 1, max: 2 ** 31 - 1 }).map(
    (seed) =>
      generateSync!({ $ref: ref, components } as never, {
        seed,
        optionalsProbability: 0.6,
        maxDefaultItems: 4,
        maxItems: 6,
        maxLength: 200,
      }) as Json,
  );

/**
 * Free text: half from all of Unicode, half from printable ASCII (where quotes, %, #, \\ and the like
 * come up often enough to matter), except U+0000, which the service refuses (PostgreSQL text cannot hold it).
 */
const freeText = (maxLength: number) =>
  fc.oneof(fc.string({ unit: 'binary', maxLength }), fc.string({ maxLength })).filter((s) => !s.includes('\u0000'));

const calendarDate = fc
  .date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));

const price = fc.oneof(
  fc.nat({ max: 999_999_999 }).map(String),
  fc.nat({ max: 999_999_999 }).map((n) => n.toLocaleString('en-US')),
  fc.tuple(fc.nat({ max: 99_999 }), fc.stringMatching(/^\d{1,2}$/)).map(([d, c]) => `${d}.${c}`),
);
const invoiceItem = fc
  .tuple(
    freeText(40).filter((s) => s.trim() !== '' && !/[\n\r\u2028\u2029]/.test(s)),
    price,
  )
  .map(([description, amount]) => `${description.trim()}: $${amount}`);

export interface Company {
  inspectorEmails: string[];
}

/** A request body the service must accept: valid for the schema and for the business rules. */
export function validReportBody(company: Company, restIds: string[]): fc.Arbitrary<Body> {
  return fc
    .record({
      generated: fromSchema('#/components/schemas/ReportInput'),
      clientNames: fc.oneof(
        fc.constant(undefined),
        freeText(50).filter((s) => s.trim() !== ''),
        fc.array(freeText(30), { maxLength: 5 }).map((names) => [...names, 'Jordan Smith']),
      ),
      inspectionDate: calendarDate,
      inspectors: fc.option(fc.subarray(company.inspectorEmails), { nil: undefined }),
      upperCaseInspectors: fc.boolean(),
      invoiceItems: fc.option(fc.array(invoiceItem, { maxLength: 5 }), { nil: undefined }),
      text: fc.option(fc.record({ address: freeText(100), notes: freeText(300), agentName: freeText(50) }), {
        nil: undefined,
      }),
      restId: fc.option(
        fc.oneof(
          fc.constantFrom(...restIds),
          freeText(40).filter((s) => s !== ''),
        ),
        {
          nil: undefined,
        },
      ),
    })
    .map(({ generated, clientNames, inspectionDate, inspectors, upperCaseInspectors, invoiceItems, text, restId }) => {
      const body: Body = { ...(generated as Body), ...text, inspectionDate };
      // json-schema-faker leaves `contains` out: make sure of the non-blank name the schema asks for.
      if (clientNames !== undefined || !hasName(body.clientNames)) body.clientNames = clientNames ?? 'Jordan Smith';
      // Only users of the company may be named as inspectors (matched case-insensitively).
      if (inspectors === undefined) delete body.inspectorEmails;
      else body.inspectorEmails = inspectors.map((e) => (upperCaseInspectors ? e.toUpperCase() : e));
      if (invoiceItems !== undefined) body.invoiceItems = invoiceItems;
      if (restId === undefined) delete body.restId;
      else body.restId = restId;
      return body;
    });
}

function hasName(value: Json | undefined): boolean {
  const names = Array.isArray(value) ? value : [value];
  return names.some((n) => typeof n === 'string' && n.trim() !== '');
}

const STRING_FIELDS = ['address', 'yearBuilt', 'squareFeet', 'notes', 'restId', 'fromRestService', 'agentName'];
const MAX_LENGTH: Record<string, number> = {
  address: 1000,
  yearBuilt: 20,
  squareFeet: 20,
  notes: 100_000,
  restId: 255,
  fromRestService: 255,
  agentName: 320,
  agentPhone: 50,
};
const notAnObject = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.string(),
  fc.array(fc.string(), { maxLength: 3 }),
) as fc.Arbitrary<Json>;
const wrongType = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
) as fc.Arbitrary<Json>;

/** One way to break a valid body; each must be refused with 400. Labels show in a failure report. */
export const reportMutation: fc.Arbitrary<{ label: string; apply: (body: Body) => Json }> = fc.oneof(
  fc.constantFrom('clientNames', 'inspectionDate').map((field) => ({
    label: `without ${field}`,
    apply: (body: Body) => {
      const copy = { ...body };
      delete copy[field];
      return copy;
    },
  })),
  fc
    .stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,20}$/)
    .filter((name) => !REPORT_FIELDS.includes(name) && !(name in Object.prototype))
    .map((name) => ({ label: `unknown field ${name}`, apply: (body: Body) => ({ ...body, [name]: 'x' }) })),
  fc.tuple(fc.constantFrom(...REPORT_FIELDS), wrongType).map(([field, value]) => ({
    label: `${field} = ${JSON.stringify(value)}`,
    apply: (body: Body) => ({ ...body, [field]: value }),
  })),
  fc.constantFrom(...Object.keys(MAX_LENGTH)).map((field) => ({
    label: `${field} longer than ${MAX_LENGTH[field]}`,
    apply: (body: Body) => ({ ...body, [field]: 'x'.repeat(MAX_LENGTH[field]! + 1) }),
  })),
  fc
    .tuple(fc.constantFrom('clientEmails', 'agentEmail'), fc.stringMatching(/^[a-z]{1,10}(@|\.)?[a-z]{0,10}$/))
    .filter(([, email]) => !/^[^@]+@[^@]+\.[^@]+$/.test(email) && email.trim() !== '')
    .map(([field, email]) => ({ label: `${field} = ${email}`, apply: (body: Body) => ({ ...body, [field]: email }) })),
  fc
    .constantFrom('150', 'Radon test $150', 'Radon test: $12.345', 'Fee: $.50', ': $5', 'Fee: $1,25', 'Fee: 12')
    .map((item) => ({ label: `invoice item ${item}`, apply: (body: Body) => ({ ...body, invoiceItems: [item] }) })),
  fc
    .oneof(
      fc.constantFrom('2026-02-30', '2026-13-01', '0000-01-01', '2026-1-1', '14/03/2026', '2026-03-14T00:00:00Z'),
      fc.string({ maxLength: 12 }),
    )
    .map((date) => ({ label: `inspectionDate = ${date}`, apply: (body: Body) => ({ ...body, inspectionDate: date }) })),
  fc.constantFrom<Json>('', '   ', [], ['', ' \t']).map((names) => ({
    label: `clientNames = ${JSON.stringify(names)}`,
    apply: (body: Body) => ({ ...body, clientNames: names }),
  })),
  fc.emailAddress().map((email) => ({
    label: `inspectorEmails has ${email}, not a user`,
    apply: (body: Body) => ({ ...body, inspectorEmails: [`nobody-${email}`] }),
  })),
  fc.constantFrom(...STRING_FIELDS).map((field) => ({
    label: `NUL in ${field}`,
    apply: (body: Body) => ({ ...body, [field]: 'a\u0000b' }),
  })),
  notAnObject.map((value) => ({ label: `body ${JSON.stringify(value)}`, apply: () => value })),
);
