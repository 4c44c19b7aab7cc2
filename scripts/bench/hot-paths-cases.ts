/**
 * `npm run bench`'s cases: what autocannon sends for each, against whichever target. Reads go to the
 * large company (1M reports) but for the small company's first page; writes create new reports in the
 * large company or update its seeded ones.
 */
import { LARGE, ONLY, type Case } from './hot-paths-settings.js';
import type { Reference } from './hot-paths-targets.js';
import { benchReport, type SeededCompany } from './seed.js';

/** Bare Express's only case. */
export const bareCase: Case = { name: 'constant report', requests: [{ method: 'GET', path: '/report' }] };

export interface CaseInputs {
  smallHeaders: Record<string, string>;
  largeHeaders: Record<string, string>;
  large: SeededCompany;
  reference: Reference;
}

/** Numbers the ids read and the restIds written, across every case and target. */
let counter = 0;

function reportBody(restId: string, inspectorEmail: string, notes?: string): string {
  const report = benchReport(restId, inspectorEmail);
  return JSON.stringify(notes === undefined ? report : { ...report, notes });
}

function readCases({ smallHeaders, largeHeaders, reference: { ids, nextPath } }: CaseInputs): Case[] {
  return [
    { name: 'GET /auth', headers: smallHeaders, requests: [{ method: 'GET', path: '/auth' }] },
    {
      name: 'GET /reports/{id}',
      compared: true,
      headers: largeHeaders,
      requests: [
        { method: 'GET', setupRequest: (req) => ({ ...req, path: `/reports/${ids[counter++ % ids.length]}` }) },
      ],
    },
    {
      name: 'GET /reports?limit=20 (1k)',
      headers: smallHeaders,
      requests: [{ method: 'GET', path: '/reports?limit=20' }],
    },
    {
      name: 'GET /reports?limit=20 (1M)',
      compared: true,
      headers: largeHeaders,
      requests: [{ method: 'GET', path: '/reports?limit=20' }],
    },
    {
      name: 'GET /reports page 2 (1M)',
      headers: largeHeaders,
      requests: [{ method: 'GET', path: nextPath }],
    },
  ];
}

/** A case of POST /reports/new (also driven against the straightforward implementation): each request as `next` makes it. */
function postCase(
  name: string,
  headers: Record<string, string>,
  next: () => { body: string; headers?: Record<string, string> },
): Case {
  const setupRequest: NonNullable<Case['requests'][number]['setupRequest']> = (req) => {
    const made = next();
    return { ...req, path: '/reports/new', body: made.body, headers: { ...req.headers, ...made.headers } };
  };
  return { name, compared: true, headers, requests: [{ method: 'POST', setupRequest }] };
}

function writeCases({ largeHeaders, large }: CaseInputs): Case[] {
  const headers = { ...largeHeaders, 'content-type': 'application/json' };
  const email = large.inspectorEmail;
  return [
    postCase('POST /reports/new (create)', headers, () => ({
      body: reportBody(`bench-new-${process.pid}-${++counter}`, email),
    })),
    // Existing restIds, spread so that concurrent updates rarely wait on the same row lock.
    postCase('POST /reports/new (update)', headers, () => ({
      body: reportBody(`seed-${1 + ((++counter * 7919) % LARGE)}`, email),
    })),
    // The same creates, each sent with an Idempotency-Key of its own (a retry-safe partner's creates):
    // what keeping the keys costs against the creates above. The yardstick ignores the header.
    postCase('POST /reports/new (create, Idempotency-Key)', headers, () => {
      const restId = `bench-idem-${process.pid}-${++counter}`;
      return { body: reportBody(restId, email), headers: { 'idempotency-key': restId } };
    }),
    // A partner's sync sending every edit of one inspection as it happens, from parallel workers:
    // every connection updates the same report (created by the first write), each edit its own.
    postCase('POST /reports/new (one-report burst)', headers, () => ({
      body: reportBody(`bench-burst-${process.pid}`, email, `Edit ${++counter} of the inspection.`),
    })),
  ];
}

/** Every case, in the order driven, or those whose names contain one of BENCH_ONLY's. */
export function buildCases(inputs: CaseInputs): Case[] {
  const all = [...readCases(inputs), ...writeCases(inputs)];
  return all.filter((c) => !ONLY || ONLY.some((o) => c.name.includes(o)));
}
