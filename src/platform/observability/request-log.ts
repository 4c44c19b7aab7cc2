import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler } from 'express';
import type { Logger } from './logger.js';
import { routeTemplate } from '../http/route-template.js';
import { keyCompanyId } from '../../core/request-context.js';
import { isUuid } from '../../core/ids.js';

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

const REQUEST_LOG = Symbol('request log');

/** What requestLogger keeps on a request: its logger is made from these on first use. */
interface RequestLog {
  base: Logger;
  reqId: string;
  child?: Logger;
}
type LoggedRequest = IncomingMessage & { [REQUEST_LOG]?: RequestLog };

/** The request's logger, every line carrying its request id (reqId); undefined before requestLogger ran. */
export function requestLog(req: IncomingMessage): Logger | undefined {
  const state = (req as LoggedRequest)[REQUEST_LOG];
  return state && (state.child ??= state.base.child({ reqId: state.reqId }));
}

/** One log line's fields. Deliberately no headers, query or body: nothing secret can slip in. */
function requestLine(req: Request, res: ServerResponse, durationMs: number) {
  return {
    method: req.method,
    route: routeTemplate(req),
    status: res.statusCode,
    durationMs,
    companyId: companyIdOf(req),
    ...(res.writableFinished ? {} : { aborted: true }),
  };
}

/**
 * One JSON line per request when its response ends or is cut off (method, route template, status,
 * duration, request id, company id); 5xx at level error, the rest at info. requestLog(req) carries the
 * request id for anything else logged while handling the request. (pino-http does the same, but makes two
 * child loggers per request, one of them serialising the whole request, whether or not anything is
 * logged: here the child is made only when used, and the line only when its level is written.)
 */
export function requestLogger(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = Date.now();
    const reqId = requestId(req, res);
    // A plain property, the same on every request: a getter defined per request would give each
    // request object a shape of its own, and slow every later property read on it.
    (req as LoggedRequest)[REQUEST_LOG] = { base: logger, reqId };
    const done = () => {
      res.removeListener('finish', done);
      res.removeListener('close', done);
      const level = res.statusCode >= 500 ? 'error' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      requestLog(req)![level](requestLine(req, res, Date.now() - started), 'request completed');
    };
    res.on('finish', done);
    res.on('close', done);
    next();
  };
}
