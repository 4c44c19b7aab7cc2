import { isUtf8, transcode } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as contentType from 'content-type';
import typeis from 'type-is';
import express, { type RequestHandler } from 'express';
import { refuse } from '../../core/errors.js';
import { turnFor } from '../../core/loop-turns.js';
import { hasBody } from './unread-body.js';
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

/** How many times byte occurs in bytes, counted up to limit + 1 (by memchr, not a loop over every byte). */
function occurrencesUpTo(bytes: Uint8Array, byte: number, limit: number): number {
  let count = 0;
  for (let at = bytes.indexOf(byte); at !== -1 && count <= limit; at = bytes.indexOf(byte, at + 1)) count++;
  return count;
}

/**
 * Whether UTF-8 JSON text nests arrays and objects deeper than max: one pass over the bytes, counting
 * brackets outside strings, in constant stack and before JSON.parse builds anything. In UTF-8 every
 * byte of a multi-byte character is ≥ 0x80, so it never reads as a quote or a bracket. Text that is not
 * JSON at all is left to the parser to refuse. Text with at most max opening brackets in all cannot
 * nest deeper: most bodies are settled by two searches for a byte, not by the scan.
 */
export function nestsDeeperThan(json: Uint8Array, max: number): boolean {
  const brackets = occurrencesUpTo(json, OPEN_BRACKET, max);
  if (brackets + occurrencesUpTo(json, OPEN_BRACE, max - brackets) <= max) return false;
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

/** The refusal of a body in another charset than UTF-8, here and for body-parser's own (error-handler.ts). */
export const UNSUPPORTED_CHARSET = 'unsupported body encoding: send UTF-8 JSON';

/** body-parser's verify hook: runs on the raw (inflated) bytes, after the size limit and before parsing. */
function checkRawBody(_req: IncomingMessage, _res: ServerResponse, body: Buffer): void {
  if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
    throw refuse.badRequest(`the body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
  }
  rejectInvalidUtf8(body);
}

/**
 * The charset a JSON body is sent in: its Content-Type's, or UTF-8. JSON between systems is UTF-8
 * (RFC 8259), and the depth scan reads UTF-8 bytes: any other is refused before the body is read.
 */
function charsetOf(req: IncomingMessage): string {
  return contentType.parse(req.headers['content-type'] ?? '').parameters.charset?.toLowerCase() ?? 'utf-8';
}

/** From this many bytes on, UTF-8 is decoded by transcoding (simdutf/ICU): far faster than V8's decoder for text beyond ASCII. */
const TRANSCODE_FROM_BYTES = 16 * 1024;
const BOM = [0xef, 0xbb, 0xbf];
const JSON_WHITESPACE = ' \t\n\r';

/**
 * The JSON a body holds (bytes already checked to be well-formed UTF-8 by checkRawBody), as body-parser's
 * strict JSON parser reads it: a leading byte order mark skipped, an empty body read as {}, and
 * anything but an object or array at the top refused. Large bodies are decoded by transcoding: V8's
 * UTF-8 decoder is slow on text beyond ASCII, and it runs on the event loop every company shares.
 */
export function parseJsonBody(bytes: Buffer): unknown {
  const text = BOM.every((byte, i) => bytes[i] === byte) ? bytes.subarray(BOM.length) : bytes;
  const json =
    // Only well-formed UTF-8 transcodes: bytes that are not, and not JSON either, are refused below.
    text.length >= TRANSCODE_FROM_BYTES && isUtf8(text)
      ? transcode(text, 'utf8', 'utf16le').toString('utf16le')
      : text.toString('utf8');
  if (json.length === 0) return {};
  let first = 0;
  while (first < json.length && JSON_WHITESPACE.includes(json[first]!)) first++;
  if (json[first] !== '{' && json[first] !== '[') throw refuse.badRequest(NOT_JSON);
  try {
    return JSON.parse(json);
  } catch {
    throw refuse.badRequest(NOT_JSON);
  }
}

/** The refusal of a body that does not parse, here and for body-parser's own (error-handler.ts). */
export const NOT_JSON = 'the body is not valid JSON';

/** No operation of openapi.yaml with these methods takes a body: one sent along is never read. */
export const BODILESS_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

/** The largest body read (decompressed): 1 MiB, as openapi.yaml's 413 says. */
export const MAX_BODY_BYTES = 1024 * 1024;

const JSON_TYPE = 'application/json';

/** The refusal of a body that is not JSON, here and for the validator's own 415 (error-handler.ts). */
export const NOT_JSON_TYPE = 'unsupported media type: send Content-Type: application/json';

/**
 * Whether the request's Content-Length alone already exceeds the budget: a body sent as it is
 * (no Content-Encoding) would hold that many bytes. Refused before a byte is read, at once: the
 * reader would refuse it too, but only once the whole body had arrived.
 */
function announcedTooLarge(req: IncomingMessage): boolean {
  const encoding = req.headers['content-encoding'];
  return (encoding === undefined || encoding === 'identity') && Number(req.headers['content-length']) > MAX_BODY_BYTES;
}

/**
 * The body parser: JSON of at most 1 MiB (decompressed), valid UTF-8, nested at most MAX_JSON_DEPTH
 * deep; another type is 415 and a Content-Length past 1 MiB 413, before a byte is read. A method whose
 * operations take no body leaves it unread, so it cannot earn a 413 or 415 they do not declare.
 */
export function jsonBody(): RequestHandler {
  // Whether a body is JSON is decided below, once: the reader reads every body that reaches it.
  const read = express.raw({ type: () => true, limit: MAX_BODY_BYTES, verify: checkRawBody });
  return (req, res, next) => {
    if (BODILESS_METHODS.has(req.method)) return next();
    if (announcedTooLarge(req)) return next(refuse.bodyTooLarge());
    // A body of another type is refused here, for every operation alike: one that takes no body
    // declares the 415 as well, and the validator would let it through. No body is the operation's to judge.
    if (!typeis(req, [JSON_TYPE])) return next(hasBody(req) ? refuse.unsupportedMediaType(NOT_JSON_TYPE) : undefined);
    if (charsetOf(req) !== 'utf-8') return next(refuse.unsupportedMediaType(UNSUPPORTED_CHARSET));
    read(req, res, (err?: unknown) => {
      if (err !== undefined) return next(err);
      if (!Buffer.isBuffer(req.body)) return next();
      const bytes = req.body.length;
      try {
        req.body = parseJsonBody(req.body);
      } catch (refused) {
        return next(refused);
      }
      const turn = turnFor(bytes);
      if (turn) void turn.then(() => next());
      else next();
    });
  };
}
