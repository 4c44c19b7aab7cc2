/**
 * Every refusal the service answers, by name: its status and, where it is always the same, its message.
 * Code anywhere throws one of these (`refuse.notFound(…)`); the one error handler
 * (platform/http/error-handler.ts) writes it as `{"error": …}` with its headers. Imports nothing.
 */

/** The one error type: an HTTP status and a message safe to show the caller. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    /**
     * The refusal is about a passing state, not the request: the same request may succeed later, and
     * the answer asks for that retry (an Idempotency-Key never keeps it, or the retry would get it again).
     */
    readonly transient = false,
  ) {
    super(message);
  }
}

/** Seconds a client is asked to wait before retrying a 503 of a database that cannot answer. */
export const RETRY_AFTER_SECONDS = 5;

/** Seconds a client is asked to wait when delivery slots are taken: they free within a webhook's timeout. */
export const SLOTS_RETRY_AFTER_SECONDS = 1;

const retryAfter = (seconds: number) => ({ 'Retry-After': String(seconds) });

const INVALID_KEY = 'invalid API key';

/** The registry: each kind of error, its status, and the headers or fixed message it always has. */
export const refuse = {
  badRequest: (message: string) => new HttpError(400, message),
  /** A request target that is neither a path nor an http(s) URL: the connection closes, as for malformed HTTP. */
  malformedTarget: (message: string) => new HttpError(400, message, { Connection: 'close' }),
  /** The API key is unknown or revoked (400, as the description asks, not 401). */
  invalidKey: () => new HttpError(400, INVALID_KEY),
  /** The application's token is missing or wrong (a Bearer challenge). */
  unauthorized: (message: string) => new HttpError(401, message, { 'WWW-Authenticate': 'Bearer' }),
  /** The key is valid but not for this (a live key on a sandbox operation). */
  forbidden: (message: string) => new HttpError(403, message),
  notFound: (message: string) => new HttpError(404, message),
  methodNotAllowed: (message: string, headers: Record<string, string>) => new HttpError(405, message, headers),
  conflict: (message: string) => new HttpError(409, message),
  /** A conflict with a state that passes by itself or by the caller's action: try again later. */
  conflictForNow: (message: string) => new HttpError(409, message, {}, true),
  bodyTooLarge: () => new HttpError(413, 'request body is larger than 1 MiB'),
  unsupportedMediaType: (message: string) => new HttpError(415, message),
  /** Any Expect but 100-continue; the body is left unread, so the connection closes. */
  expectationFailed: () =>
    new HttpError(417, 'the Expect header is not supported: only 100-continue is', { Connection: 'close' }),
  /** A request well-formed but at odds with an earlier one (an Idempotency-Key reused with another body). */
  unprocessable: (message: string) => new HttpError(422, message),
  tooManyRequests: (message: string, seconds: number) => new HttpError(429, message, retryAfter(seconds), true),
  internal: () => new HttpError(500, 'internal server error'),
  /** The webhook receiver failed: what an inspector's publish shows. */
  badGateway: (message: string) => new HttpError(502, message),
  /** An answer given before, given again (an Idempotency-Key's retry). */
  again: (status: number, message: string) => new HttpError(status, message),
  /** The service cannot answer for the moment; Retry-After says when to try again (every 503 carries it). */
  unavailable: (message: string, seconds = RETRY_AFTER_SECONDS) =>
    new HttpError(503, message, retryAfter(seconds), true),
} as const;

export const badRequest = refuse.badRequest;
export const notFound = refuse.notFound;
export const conflict = refuse.conflict;
export const unavailable = refuse.unavailable;

/** Whether err is the refusal of the request's API key (about who asked, not what was asked). */
export const isInvalidKey = (err: unknown) =>
  err instanceof HttpError && err.status === 400 && err.message === INVALID_KEY;
