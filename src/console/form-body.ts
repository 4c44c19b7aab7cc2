import type { IncomingMessage } from 'node:http';
import * as contentType from 'content-type';
import type { RequestHandler } from 'express';
import getRawBody from 'raw-body';
import typeis from 'type-is';
import { refuse } from '../core/errors.js';
import { hasBody } from '../platform/http/unread-body.js';

/** Forms are small: a form's fields, never a file. */
export const FORM_LIMIT_BYTES = 64 * 1024;

const FORM_TYPE = 'application/x-www-form-urlencoded';
const TOO_LARGE = 'the form is larger than a form may be (64 KiB)';

/** The body's length as its Content-Length announces it (sent as it is: no Content-Encoding), if it does. */
function announcedLength(req: IncomingMessage): number | undefined {
  const length = req.headers['content-length'];
  return length === undefined ? undefined : Number(length);
}

/** A form's fields by name; a name sent several times (ticked checkboxes) holds them all, in order. */
function fieldsOf(text: string): Record<string, string | string[]> {
  const fields = new Map<string, string | string[]>();
  for (const [name, value] of new URLSearchParams(text)) {
    const seen = fields.get(name);
    fields.set(name, seen === undefined ? value : ([] as string[]).concat(seen, value));
  }
  // fromEntries defines each name as an own field: `__proto__` stays a field, never the prototype.
  return Object.fromEntries(fields);
}

/**
 * Reads a form (`application/x-www-form-urlencoded`, UTF-8) of at most FORM_LIMIT_BYTES into req.body.
 * A larger body is refused (413) without reading the rest, which body-parser would read to its end first;
 * a body of another type is left unread (the CSRF check refuses a form without its token).
 */
export const formBody: RequestHandler = (req, _res, next) => {
  req.body = {};
  if (req.method === 'GET' || req.method === 'HEAD' || !hasBody(req) || !typeis(req, [FORM_TYPE])) return next();
  const length = announcedLength(req);
  if (length !== undefined && length > FORM_LIMIT_BYTES) return next(refuse.bodyTooLarge(TOO_LARGE));
  const { charset = 'utf-8' } = contentType.parse(req.headers['content-type'] ?? '').parameters;
  if ((req.headers['content-encoding'] ?? 'identity') !== 'identity' || charset.toLowerCase() !== 'utf-8')
    return next(refuse.unsupportedMediaType('send the form as UTF-8, uncompressed'));
  getRawBody(req, { length, limit: FORM_LIMIT_BYTES, encoding: 'utf-8' }).then(
    (text) => {
      req.body = fieldsOf(text);
      next();
    },
    (err: { type?: string; status?: number }) =>
      next(
        err.type === 'entity.too.large'
          ? refuse.bodyTooLarge(TOO_LARGE)
          : refuse.badRequest('the form could not be read'),
      ),
  );
};
