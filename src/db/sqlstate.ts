// PostgreSQL's errors by name (SQLSTATE): code outside db/ asks these predicates, never compares codes.

const sqlstate = (err: unknown): unknown => (err as { code?: unknown } | null)?.code;

/** 40001: the transaction could not be serialised with another (run it again). */
export const isSerializationFailure = (err: unknown): boolean => sqlstate(err) === '40001';

/** 40P01: PostgreSQL ended a deadlock by failing this transaction. */
export const isDeadlock = (err: unknown): boolean => sqlstate(err) === '40P01';

/** 23505: a unique index refused the row. */
export const isUniqueViolation = (err: unknown): boolean => sqlstate(err) === '23505';

/** 23514 on the named check constraint: the row breaks that rule. */
export const isCheckViolation = (err: unknown, constraint: string): boolean =>
  sqlstate(err) === '23514' && (err as { constraint?: unknown }).constraint === constraint;

/** 57014: the statement was cancelled (statement_timeout): the database responds, this statement was slow. */
export const isStatementTimeout = (err: unknown): boolean => sqlstate(err) === '57014';

/**
 * 25006: the server refuses to write: a hot standby not yet promoted, or default_transaction_read_only
 * (a standby refuses LISTEN and NOTIFY with it too). Reads still work there.
 */
export const isReadOnlyTransaction = (err: unknown): boolean => sqlstate(err) === '25006';

/** 55P03: a lock could not be had at once (NOWAIT) or within lock_timeout. */
export const isLockNotAvailable = (err: unknown): boolean => sqlstate(err) === '55P03';
