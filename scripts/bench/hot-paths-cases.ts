/**
 * `npm run bench`'s cases: what autocannon sends for each, whichever implementation it drives. Reads go
 * to the large company but for the small company's first page; writes create new reports in the large
 * company or update its seeded ones.
 */
import type autocannon from 'autocannon';
import { benchReport } from './seed.js';

export interface Case {
  name: string;
  requests: autocannon.Request[];
  headers?: Record<string, string>;
  /** Also driven against the straightforward implementation, right before or after the service. */
  compared?: boolean;
}

export interface CaseInputs {
  small: Record<string, string>;
  large: Record<string, string>;
  largeReports: number;
  inspectorEmail: string;
  /** The ids of the large company's first page, and the path of its second. */
  ids: string[];
  nextPath: string;
}

/** Numbers the ids read and the restIds written, across every case and implementation. */
let counter = 0;

/** A case of POST /reports/new: each request's body (and headers) as `next` makes them. */
function postCase(name: string, headers: Record<string, string>, next: () => [object, Record<string, string>?]): Case {
  const setupRequest: NonNullable<autocannon.Request['setupRequest']> = (req) => {
    const [body, extra] = next();
    return { ...req, path: '/reports/new', body: JSON.stringify(body), headers: { ...req.headers, ...extra } };
  };
  return { name, compared: true, headers, requests: [{ method: 'POST', setupRequest }] };
}

export function buildCases({ small, large, largeReports, inspectorEmail, ids, nextPath }: CaseInputs): Case[] {
  const json = { ...large, 'content-type': 'application/json' };
  const report = (restId: string) => benchReport(restId, inspectorEmail);
  return [
    { name: 'GET /auth', headers: small, requests: [{ method: 'GET', path: '/auth' }] },
    {
      name: 'GET /reports/{id}',
      compared: true,
      headers: large,
      requests: [
        { method: 'GET', setupRequest: (req) => ({ ...req, path: `/reports/${ids[counter++ % ids.length]}` }) },
      ],
    },
    { name: 'GET /reports?limit=20 (1k)', headers: small, requests: [{ method: 'GET', path: '/reports?limit=20' }] },
    {
      name: 'GET /reports?limit=20 (1M)',
      compared: true,
      headers: large,
      requests: [{ method: 'GET', path: '/reports?limit=20' }],
    },
    { name: 'GET /reports page 2 (1M)', headers: large, requests: [{ method: 'GET', path: nextPath }] },
    postCase('POST /reports/new (create)', json, () => [report(`bench-new-${process.pid}-${++counter}`)]),
    // Existing restIds, spread so that concurrent updates rarely wait on the same row lock.
    postCase('POST /reports/new (update)', json, () => [report(`seed-${1 + ((++counter * 7919) % largeReports)}`)]),
    // A retry-safe partner's creates, each with an Idempotency-Key of its own (the yardstick ignores it).
    postCase('POST /reports/new (create, Idempotency-Key)', json, () => {
      const restId = `bench-idem-${process.pid}-${++counter}`;
      return [report(restId), { 'idempotency-key': restId }];
    }),
    // A partner's sync sending every edit of one inspection from parallel workers: one report, many edits.
    postCase('POST /reports/new (one-report burst)', json, () => [
      { ...report(`bench-burst-${process.pid}`), notes: `Edit ${++counter} of the inspection.` },
    ]),
  ];
}
