import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type RequestHandler } from 'express';
import { badRequest, refuse } from '../../core/errors.js';
import { rejectInvalidUtf8 } from './utf8-body.js';

/**
 * How deep a request body may nest arrays and objects. The deepest body openapi.yaml accepts nests 2
 * (an array of strings in an object); a deeper one can only cost the service stack and CPU.
 */
export const MAX_JSON_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * Whether UTF-8 JSON text nests arrays and objects deeper than max: one pass over the bytes, counting
 * brackets outside strings, in constant stack and before JSON.parse builds anything. In UTF-8 every
 * byte of a multi-byte character is ≥ 0x80, so it never reads as a quote or a bracket. Text that is not
 * JSON at all is left to the parser to refuse.
 */
export function nestsDeeperThan(json: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const byte = json[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
      if (++depth > max) return true;
    } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) depth--;
  }
  return false;
}

/** body-parser's verify hook: runs on the raw (inflated) bytes, after the size limit and before parsing. */
function checkRawBody(_req: IncomingMessage, _res: ServerResponse, body: Buffer, charset: string): void {
  // JSON between systems is UTF-8 (RFC 8259), and the depth scan reads UTF-8 bytes.
  if (charset !== 'utf-8') throw refuse.unsupportedMediaType('unsupported body encoding: send UTF-8 JSON');
  if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
    throw badRequest(`the body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
  }
  rejectInvalidUtf8(body);
}

/** No operation of openapi.yaml with these methods takes a body: one sent along is never read. */
export const BODILESS_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

/** The largest body read (decompressed): 1 MiB, as openapi.yaml's 413 says. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The body parser: JSON of at most 1 MiB (decompressed, when sent with a Content-Encoding), UTF-8
 * (the bytes too), nested at most MAX_JSON_DEPTH deep. A body sent with a method whose operations
 * take none is left unread (Node discards it), so it cannot earn a 413 or 415 those operations do
 * not declare.
 */
export function jsonBody(): RequestHandler {
  const parse = express.json({ limit: MAX_BODY_BYTES, verify: checkRawBody });
  return (req, res, next) => (BODILESS_METHODS.has(req.method) ? next() : parse(req, res, next));
}
