import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../logger.js';
import { routeTemplate } from '../route-template.js';
import { keyCompanyId } from './api-key.js';
import { isUuid } from '../store/ids.js';

/**
 * A caller's X-Request-Id is kept when it looks like an id (UUIDs, ULIDs, trace ids); anything else
 * (too long, spaces, control characters that could forge log lines) is replaced by a fresh UUID.
 */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:+=/-]{1,128}$/;

function requestId(req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

/** The company a request acted for: its API key's, or the one in an application API path. */
function companyIdOf(req: Request): string | undefined {
  const fromPath = (req as { openapi?: { pathParams?: Record<string, string> } }).openapi?.pathParams?.companyId;
  return keyCompanyId(req) ?? (fromPath && isUuid(fromPath) ? fromPath : undefined);
}

/** One log line's fields. Deliberately no headers, query or body: nothing secret can slip in. */
function requestLine(req: IncomingMessage, res: ServerResponse, responseTime: number) {
  const request = req as Request;
  return {
    method: request.method,
    route: routeTemplate(request),
    status: res.statusCode,
    durationMs: responseTime,
    companyId: companyIdOf(request),
    ...(res.writableFinished ? {} : { aborted: true }),
  };
}

/**
 * pino-http: one JSON line per request when its response ends (method, route template, status,
 * duration, request id, company id); 5xx at level error, the rest at info. `req.log` carries the
 * request id for anything else logged while handling the request.
 */
export function requestLogger(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    genReqId: requestId,
    quietReqLogger: true,
    quietResLogger: true,
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessObject: (req, res, val: { responseTime: number }) => requestLine(req, res, val.responseTime),
    customErrorObject: (req, res, _err, val: { responseTime: number }) => requestLine(req, res, val.responseTime),
    customSuccessMessage: () => 'request completed',
    customErrorMessage: () => 'request completed',
  }) as unknown as RequestHandler;
}
