// Every error the service responds with, by name: its status and, where fixed, its message. Code throws
// one of these (`refuse.notFound(…)`); platform/http/error-handler.ts writes it. Imports nothing.

/**
 * Each kind of refusal, by a stable name: code recognises a refusal by its code, never by its message
 * (messages are for the caller, and change). The codes never leave the service: the contract's body is
 * `{"error": …}` alone.
 */
export type ErrorCode =
  | 'BAD_REQUEST'
  | 'MALFORMED_TARGET'
  | 'INVALID_API_KEY'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'GONE'
  | 'METHOD_NOT_ALLOWED'
  | 'CONFLICT'
  | 'CONFLICT_FOR_NOW'
  | 'PUBLISHED_MEANWHILE'
  | 'BODY_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'EXPECTATION_FAILED'
  | 'UNPROCESSABLE'
  | 'TOO_MANY_REQUESTS'
  | 'INTERNAL'
  | 'BAD_GATEWAY'
  | 'KEPT_RESPONSE'
  | 'UNAVAILABLE';

/**
 * The refusals about a passing state, not the request: the same request may succeed later, and the
 * response asks for that retry (an Idempotency-Key never keeps them, or the retry would get them again).
 */
const TRANSIENT: ReadonlySet<ErrorCode> = new Set(['CONFLICT_FOR_NOW', 'TOO_MANY_REQUESTS', 'UNAVAILABLE']);

/** The one error type: its kind, an HTTP status and a message safe to show the caller. */
export class HttpError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  /** Whether the refusal asks for a retry of the same request later (see TRANSIENT). */
  get transient(): boolean {
    return TRANSIENT.has(this.code);
  }
}

/** Seconds a client is asked to wait before retrying a 503 of a database that cannot respond. */
export const RETRY_AFTER_SECONDS = 5;

/** Seconds a client is asked to wait when delivery slots are taken: they free within a webhook's timeout. */
export const SLOTS_RETRY_AFTER_SECONDS = 1;

const retryAfter = (seconds: number) => ({ 'Retry-After': String(seconds) });

/** The registry: each kind of error, its status, and the headers or fixed message it always has. */
export const refuse = {
  badRequest: (message: string) => new HttpError('BAD_REQUEST', 400, message),
  /** A request target that is neither a path nor an http(s) URL: the connection closes, as for malformed HTTP. */
  malformedTarget: (message: string) => new HttpError('MALFORMED_TARGET', 400, message, { Connection: 'close' }),
  /** The API key is unknown or revoked (400, as the description asks, not 401). */
  invalidKey: () => new HttpError('INVALID_API_KEY', 400, 'invalid API key'),
  /** The application's token is missing or wrong (a Bearer challenge). */
  unauthorized: (message: string) => new HttpError('UNAUTHORIZED', 401, message, { 'WWW-Authenticate': 'Bearer' }),
  /** The key is valid but not for this (a live key on a sandbox operation). */
  forbidden: (message: string) => new HttpError('FORBIDDEN', 403, message),
  notFound: (message: string) => new HttpError('NOT_FOUND', 404, message),
  /** Something that existed and can no longer be used (a console invitation used, revoked or expired). */
  gone: (message: string) => new HttpError('GONE', 410, message),
  methodNotAllowed: (message: string, headers: Record<string, string>) =>
    new HttpError('METHOD_NOT_ALLOWED', 405, message, headers),
  conflict: (message: string) => new HttpError('CONFLICT', 409, message),
  /** A publish that asked for the report as it saw it, and found it published since. */
  publishedMeanwhile: (message: string) => new HttpError('PUBLISHED_MEANWHILE', 409, message),
  /** A conflict with a state that passes by itself or by the caller's action: try again later. */
  conflictForNow: (message: string) => new HttpError('CONFLICT_FOR_NOW', 409, message),
  bodyTooLarge: (message = 'request body is larger than 1 MiB') => new HttpError('BODY_TOO_LARGE', 413, message),
  unsupportedMediaType: (message: string) => new HttpError('UNSUPPORTED_MEDIA_TYPE', 415, message),
  /** Any Expect but 100-continue; the body is left unread, so the connection closes. */
  expectationFailed: () =>
    new HttpError('EXPECTATION_FAILED', 417, 'the Expect header is not supported: only 100-continue is', {
      Connection: 'close',
    }),
  /** A request well-formed but at odds with an earlier one (an Idempotency-Key reused with another body). */
  unprocessable: (message: string) => new HttpError('UNPROCESSABLE', 422, message),
  tooManyRequests: (message: string, seconds: number) =>
    new HttpError('TOO_MANY_REQUESTS', 429, message, retryAfter(seconds)),
  internal: () => new HttpError('INTERNAL', 500, 'internal server error'),
  /** The webhook receiver failed: what an inspector's publish shows. */
  badGateway: (message: string) => new HttpError('BAD_GATEWAY', 502, message),
  /** A response given before, given again (an Idempotency-Key's retry). */
  keptResponse: (status: number, message: string) => new HttpError('KEPT_RESPONSE', status, message),
  /** The service cannot respond for the moment; Retry-After says when to try again (every 503 carries it). */
  unavailable: (message: string, seconds = RETRY_AFTER_SECONDS) =>
    new HttpError('UNAVAILABLE', 503, message, retryAfter(seconds)),
  /** The database cannot be reached, or does not respond in time (db/unavailable.ts decides which errors mean it). */
  databaseUnavailable: () => new HttpError('UNAVAILABLE', 503, 'database unavailable', retryAfter(RETRY_AFTER_SECONDS)),
  /** The database responds but refuses to write (a standby not yet promoted): a write may succeed later, reads work now. */
  databaseReadOnly: () => new HttpError('UNAVAILABLE', 503, 'database is read-only', retryAfter(RETRY_AFTER_SECONDS)),
} as const;

/** Whether err is a refusal of this kind. */
export const isRefusal = (err: unknown, code: ErrorCode): err is HttpError =>
  err instanceof HttpError && err.code === code;

/** Whether err is the refusal of the request's API key (about who asked, not what was asked). */
export const isInvalidKey = (err: unknown): boolean => isRefusal(err, 'INVALID_API_KEY');
