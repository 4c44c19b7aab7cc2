import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from './logger.js';
import { isQueryTimeout } from './db/pool.js';
import { INVOICE_ITEM_SHAPE } from './report-fields.js';
import { rawPathParams, routeTemplate } from './route-template.js';

/** The one error type: an HTTP status and a message safe to show the caller. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new HttpError(400, message);
export const notFound = (message: string) => new HttpError(404, message);
export const conflict = (message: string) => new HttpError(409, message);

/** Seconds a client is asked to wait before retrying a 503 (every 503 carries it). */
export const RETRY_AFTER_SECONDS = 5;
/** A 503: the service cannot answer for the moment; Retry-After says when to try again. */
export const unavailable = (message: string) =>
  new HttpError(503, message, { 'Retry-After': String(RETRY_AFTER_SECONDS) });

/**
 * PostgreSQL and network error codes that mean "the database cannot answer right now". 57014
 * (query_canceled) is a statement cut off by statement_timeout: the database is too slow, not a
 * fault of the request, and nothing of the statement was written.
 */
const DB_UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  'EHOSTUNREACH',
  '57014',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08006',
]);

function isDatabaseUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && DB_UNAVAILABLE.has(code)) return true;
  // pg's query_timeout: the answer did not come in time (a frozen or crawling database).
  if (isQueryTimeout(err)) return true;
  const message = (err as { message?: unknown }).message;
  return (
    typeof message === 'string' &&
    /(timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|is not queryable)/i.test(
      message,
    )
  );
}

interface ValidatorItem {
  path?: string;
  message?: string;
  errorCode?: string;
}

const FIELD_MESSAGES: Record<string, Record<string, string>> = {
  inspectionDate: {
    format: 'must be a calendar date YYYY-MM-DD',
    type: 'must be a calendar date YYYY-MM-DD',
    pattern: 'must be a calendar date YYYY-MM-DD',
  },
  clientNames: {
    pattern: 'must contain at least one non-blank name',
    contains: 'must contain at least one non-blank name',
  },
  clientEmails: { pattern: 'must be an e-mail address' },
  agentEmail: { pattern: 'must be an e-mail address' },
  invoiceItems: { pattern: INVOICE_ITEM_SHAPE },
  url: { format: 'must be an absolute https:// URL', pattern: 'must be an absolute https:// URL' },
  publishedUrl: { format: 'must be an absolute https:// URL', pattern: 'must be an absolute https:// URL' },
  email: { pattern: 'must be an e-mail address' },
  limit: {
    type: 'must be an integer from 1 to 100',
    minimum: 'must be an integer from 1 to 100',
    maximum: 'must be an integer from 1 to 100',
  },
};

/** "/body/clientEmails/1" → { name: "clientEmails", label: "clientEmails[1]" } */
function fieldOf(path: string): { name: string; label: string } {
  const parts = path
    .replace(/^\/(body|query|params|headers|path)\/?/, '')
    .split('/')
    .filter(Boolean);
  const name = parts[0] ?? 'body';
  const label = parts.slice(1).reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : `${acc}.${p}`), name);
  return { name, label };
}

/** Turns express-openapi-validator's list of schema errors into one sentence naming the field. */
function describeValidationErrors(items: ValidatorItem[]): string {
  // Schema alternatives (string or array) report an error per branch: prefer the most telling one.
  const keywordOf = (i: ValidatorItem) => (i.errorCode?.split('.')[0] ?? '').replace(/^x-eov-/, '');
  const rank = (i: ValidatorItem) => {
    const kw = keywordOf(i);
    return (
      [
        'required',
        'additionalProperties',
        'format',
        // Before pattern: a failed `contains` also reports its subschema's failure on each entry.
        'contains',
        'pattern',
        'maxLength',
        'minLength',
        'maxItems',
        'minimum',
        'maximum',
        'const',
        'enum',
        'type',
        'oneOf',
        'anyOf',
      ].indexOf(kw) >>> 0
    );
  };
  const first = [...items].sort((a, b) => rank(a) - rank(b))[0];
  if (!first) return 'invalid request';
  const keyword = keywordOf(first);
  const path = first.path ?? '';
  const { name, label } = fieldOf(path);
  const message = first.message ?? 'is invalid';
  if (keyword === 'required') return `${name} is required`;
  if (keyword === 'additionalProperties') return `unknown field: ${label}`;
  // A property whose schema is `false` is not accepted by that operation (restId on application reports).
  if (keyword === 'false schema') return `unknown field: ${label}`;
  if (/^Unknown query parameter/.test(message)) return `unknown query parameter: ${message.match(/'(.*)'/)?.[1] ?? ''}`;
  if (/^Empty value found for query parameter/.test(message))
    return `${message.match(/'(.*)'/)?.[1] ?? 'parameter'} must not be empty`;
  const special = FIELD_MESSAGES[name]?.[keyword];
  if (special) return `${label} ${special}`;
  const anyOfType = items.some((i) => i.path === path && i.errorCode?.startsWith('oneOf'));
  if (keyword === 'type' && anyOfType) return `${label} must be a string or an array of strings`;
  if (keyword === 'type' && path === '/body') return 'the body must be a JSON object';
  return `${label} ${message}`;
}

function reasonFromBodyParser(err: { type?: string; status?: number; errno?: unknown }): HttpError | undefined {
  // zlib's errors have no type: body-parser marks them 400 (a body that does not decode as its Content-Encoding says).
  if (err.type === undefined && err.status === 400 && typeof err.errno === 'number') {
    return badRequest('the body does not decode as its Content-Encoding says (corrupt or cut short)');
  }
  switch (err.type) {
    case 'entity.parse.failed':
      return badRequest('the body is not valid JSON');
    case 'entity.too.large':
      return new HttpError(413, 'request body is larger than 1 MiB');
    case 'encoding.unsupported':
      return new HttpError(415, 'unsupported Content-Encoding: send gzip, deflate, br or none');
    case 'charset.unsupported':
      return new HttpError(415, 'unsupported body encoding: send UTF-8 JSON');
    case 'request.aborted':
      return badRequest('the request body was not received in full');
    default:
      return undefined;
  }
}

/** The 404 of each id in a path, the same whether the id is unknown, of another company or malformed. */
const ID_NOT_FOUND: Record<string, (id: string) => string> = {
  companyId: (id) => `company ${id} not found`,
  reportId: (id) => `report ${id} not found`,
  keyId: (id) => `API key ${id} not found`,
};

function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/**
 * A path id the validator refused (too long, or not decodable: "malformed uri") cannot name anything
 * that exists: it gets the 404 of an unknown id, as the document promises, naming the first such id.
 */
function idNotFound(items: ValidatorItem[], path: string): HttpError | undefined {
  const refused = new Set(items.map((i) => /^\/params\/([^/]+)/.exec(i.path ?? '')?.[1]));
  const malformedUri = items.some((i) => i.message?.startsWith('malformed uri'));
  for (const [name, raw] of rawPathParams(path)) {
    const value = decoded(raw);
    const message = ID_NOT_FOUND[name];
    if (message && (refused.has(name) || (malformedUri && value === undefined))) return notFound(message(value ?? raw));
  }
  return undefined;
}

/** Maps any error (ours, the validator's, the body parser's, pg's) to an HttpError the caller may see. */
export function toHttpError(err: unknown, req?: { method: string; path: string }): HttpError {
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
  if (isDatabaseUnavailable(err)) return unavailable('database unavailable');
  if (typeof e.status === 'number' && Array.isArray(e.errors)) {
    switch (e.status) {
      case 400:
        return (req && idNotFound(e.errors, req.path)) ?? badRequest(describeValidationErrors(e.errors));
      case 404:
        return notFound(req ? `no route ${req.method} ${req.path}` : 'not found');
      case 405:
        return new HttpError(
          405,
          req ? `method ${req.method} is not allowed on ${req.path}` : 'method not allowed',
          e.headers ?? {},
        );
      case 413:
        return new HttpError(413, 'request body is larger than 1 MiB');
      case 415:
        return new HttpError(415, 'unsupported media type: send Content-Type: application/json');
      default:
        break;
    }
  }
  return new HttpError(500, 'internal server error');
}

/** The one place that writes error bodies: always exactly {"error": "..."}. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const httpError = toHttpError(err, req);
    if (httpError.status >= 500) {
      // req.log (pino-http) carries the request id, so this line pairs with the request's own line.
      // The route template, as on that line: the raw URL would log ids, cursors and restIds.
      (req.log ?? logger).error({ err, method: req.method, route: routeTemplate(req) }, 'request failed');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // No error is ever cached, wherever it arose: an unmet Expect is refused before noStore runs.
    res
      .status(httpError.status)
      .set({ 'Cache-Control': 'no-store', ...httpError.headers })
      .json({ error: httpError.message });
  };
}

export const unknownRoute: RequestHandler = (req) => {
  throw notFound(`no route ${req.method} ${req.path}`);
};
