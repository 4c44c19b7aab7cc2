import { refuse, type HttpError } from '../core/errors.js';
import { isQueryTimeout } from './pool.js';
import { isReadOnlyTransaction, isStatementTimeout } from './sqlstate.js';

/**
 * PostgreSQL and network error codes that mean "the database cannot be reached or is going away".
 * Class 08 is a lost or refused connection; PgBouncer reports its own (server gone, server logins
 * failing) as 08P01.
 */
const DB_UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  'EHOSTUNREACH',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '08007',
  '08P01',
]);

/**
 * Whether err means the database cannot do it now (503), not that the request or the code is wrong: it
 * cannot be reached or is read-only (below), or cut a statement off at statement_timeout (57014): it is too
 * slow, and nothing of the statement was written.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  return isDatabaseUnreachable(err) || isStatementTimeout(err);
}

/**
 * Whether err means the database cannot be reached, does not respond in time, or is read-only (it cannot
 * write, whatever is retried): unlike a statement timeout, other statements waiting would fail the same way.
 */
export function isDatabaseUnreachable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && DB_UNREACHABLE.has(code)) return true;
  if (isReadOnlyTransaction(err)) return true;
  // pg's query_timeout: the result did not come in time (a frozen or crawling database).
  if (isQueryTimeout(err)) return true;
  const message = (err as { message?: unknown }).message;
  return (
    typeof message === 'string' &&
    /(timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|is not queryable)/i.test(
      message,
    )
  );
}

/** The 503 a database error becomes, wherever it is caught; undefined when err is no such error. */
export function databaseRefusal(err: unknown): HttpError | undefined {
  if (!isDatabaseUnavailable(err)) return undefined;
  return isReadOnlyTransaction(err) ? refuse.databaseReadOnly() : refuse.databaseUnavailable();
}
