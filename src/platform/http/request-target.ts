import type { RequestHandler } from 'express';
import { refuse } from '../../core/errors.js';
import { quoted } from '../../core/quoted.js';

/** A target that begins with a scheme (absolute form): anything but a path, or the `*` of OPTIONS. */
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:/;
/** An http or https URL with a host (no user information, RFC 9110 §4.2.4), then its path and query. */
const HTTP_URL = /^https?:\/\/([^/?#@]+)([/?][^#]*)?$/i;

/**
 * A request target in absolute form (`GET http://host/auth HTTP/1.1`), which a server must accept
 * (RFC 9112 §3.2.2), is served as its origin form, its authority replacing the Host header, so
 * everything after this sees a path. Another scheme, or an http URL without a host, is 400.
 */
export const originFormTarget: RequestHandler = (req, _res, next) => {
  if (!ABSOLUTE_FORM.test(req.url)) return next();
  const url = HTTP_URL.exec(req.url);
  if (!url)
    throw refuse.malformedTarget(`the request target must be a path, or an http or https URL: ${quoted(req.url)}`);
  const [, authority, rest = '/'] = url;
  req.url = req.originalUrl = rest.startsWith('?') ? `/${rest}` : rest;
  req.headers.host = authority;
  next();
};
