import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { HttpError, refuse } from '../../core/errors.js';
import type { ErrorWording } from '../../core/error-wording-types.js';
import type { Logger } from '../observability/logger.js';
import { databaseRefusal } from '../../db/unavailable.js';
import { quoted } from '../../core/quoted.js';
import { requestLog } from '../observability/request-log.js';
import { NOT_JSON, NOT_JSON_TYPE, UNSUPPORTED_CHARSET } from './json-body.js';
import { rawPathParams, routeTemplate } from './route-template.js';
import { describeValidationErrors, type ValidatorItem } from './validation-messages.js';

function reasonFromBodyParser(err: { type?: string; status?: number; errno?: unknown }): HttpError | undefined {
  // zlib's errors have no type: body-parser marks them 400 (a body that does not decode as its Content-Encoding says).
  if (err.type === undefined && err.status === 400 && typeof err.errno === 'number') {
    return refuse.badRequest('the body does not decode as its Content-Encoding says (corrupt or cut short)');
  }
  switch (err.type) {
    case 'entity.parse.failed':
      return refuse.badRequest(NOT_JSON);
    case 'entity.too.large':
      return refuse.bodyTooLarge();
    case 'encoding.unsupported':
      return refuse.unsupportedMediaType('unsupported Content-Encoding: send gzip, deflate, br or none');
    case 'charset.unsupported':
      return refuse.unsupportedMediaType(UNSUPPORTED_CHARSET);
    case 'request.aborted':
      return refuse.badRequest('the request body was not received in full');
    default:
      return undefined;
  }
}

function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/**
 * A path whose id does not percent-decode (the validator says "malformed uri") cannot name anything
 * that exists: it gets the 404 of an unknown id, as the document promises. Every other id reaches its
 * handler, whose lookup responds with that 404 for anything unknown, malformed or too long.
 */
const isMalformedUri = (items: ValidatorItem[]) => items.some((i) => i.message?.startsWith('malformed uri'));

function undecodableIdNotFound(path: string, wording: ErrorWording): HttpError | undefined {
  for (const [name, raw] of rawPathParams(path)) {
    const message = wording.notFound[name];
    if (message && decoded(raw) === undefined) return refuse.notFound(message(raw));
  }
  return undefined;
}

/** The 404 of a path no operation has, whether the validator or the last route finds it. */
const noRoute = (req: { method: string; path: string }) =>
  refuse.notFound(`no route ${req.method} ${quoted(req.path)}`);

/** Every GET path serves HEAD too (see headAsGet), which the validator's Allow leaves out. */
function withHead(headers: Record<string, string>): Record<string, string> {
  const allow = headers.Allow?.split(', ');
  return allow?.includes('GET') ? { ...headers, Allow: [...allow, 'HEAD'].join(', ') } : headers;
}

/** Maps any error (ours, the validator's, the body parser's, pg's) to an HttpError the caller may see. */
export function toHttpError(
  err: unknown,
  req?: { method: string; path: string },
  wording: ErrorWording = { fields: {}, notFound: {} },
): HttpError {
  if (err instanceof HttpError) return err;
  const e = err as {
    status?: number;
    type?: string;
    errors?: ValidatorItem[];
    message?: string;
    headers?: Record<string, string>;
  };
  const fromParser = reasonFromBodyParser(e);
  if (fromParser) return fromParser;
  const fromDatabase = databaseRefusal(err);
  if (fromDatabase) return fromDatabase;
  if (typeof e.status === 'number' && Array.isArray(e.errors)) {
    switch (e.status) {
      case 400:
        return (
          (req && isMalformedUri(e.errors) && undecodableIdNotFound(req.path, wording)) ||
          refuse.badRequest(describeValidationErrors(e.errors, wording.fields))
        );
      case 404:
        return req ? noRoute(req) : refuse.notFound('not found');
      case 405:
        return refuse.methodNotAllowed(
          req ? `method ${req.method} is not allowed on ${quoted(req.path)}` : 'method not allowed',
          withHead(e.headers ?? {}),
        );
      case 413:
        return refuse.bodyTooLarge();
      case 415:
        return refuse.unsupportedMediaType(NOT_JSON_TYPE);
      default:
        break;
    }
  }
  return refuse.internal();
}

/** openapi.yaml's maxLength of ErrorResponse.error (test/platform/errors.test.ts holds the two together). */
export const ERROR_MAX_LENGTH = 2000;

const LAST_RESORT_BODY = JSON.stringify({ error: 'internal server error' });

/** The headers the first handler set on each response: the last resort removes them (they describe the error it failed to send). */
const attemptedHeaders = new WeakMap<Response, string[]>();

/**
 * The one place that writes error bodies: always exactly {"error": "..."}. The second handler catches
 * whatever goes wrong while sending an error (a throw here, or the response validator refusing the error
 * body), so that it still leaves as the declared JSON, never as Express's HTML page.
 */
export function errorHandler(logger: Logger, wording: ErrorWording): [ErrorRequestHandler, ErrorRequestHandler] {
  const respond: ErrorRequestHandler = (err, req, res, _next) => {
    const httpError = toHttpError(err, req, wording);
    if (httpError.status >= 500) {
      // requestLog(req) carries the request id, so this line pairs with the request's own line.
      // The route template, as on that line: the raw URL would log ids, cursors and restIds.
      (requestLog(req) ?? logger).error({ err, method: req.method, route: routeTemplate(req) }, 'request failed');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    attemptedHeaders.set(res, Object.keys(httpError.headers));
    // No error is ever cached, wherever it arose: an unmet Expect is refused before noStore runs.
    // A message is cut rather than refused: one naming input quotes it bounded, but no message may fail.
    res
      .status(httpError.status)
      .set({ 'Cache-Control': 'no-store', ...httpError.headers })
      .json({ error: quoted(httpError.message, ERROR_MAX_LENGTH) });
  };

  const lastResort: ErrorRequestHandler = (err, req, res, _next) => {
    (requestLog(req) ?? logger).error(
      { err, method: req.method, route: routeTemplate(req) },
      'the error answer failed: answering 500',
    );
    try {
      if (res.headersSent) throw err;
      for (const name of attemptedHeaders.get(res) ?? []) res.removeHeader(name);
      // Not res.json, which the response validator wraps: the body every operation declares for 500, as is.
      res
        .status(500)
        .set({ 'Cache-Control': 'no-store', 'Content-Type': 'application/json; charset=utf-8' })
        .send(LAST_RESORT_BODY);
    } catch {
      // Headers gone, or the response itself broken: all that is left is to end the exchange.
      res.destroy();
    }
  };

  return [respond, lastResort];
}

export const unknownRoute: RequestHandler = (req) => {
  throw noRoute(req);
};
