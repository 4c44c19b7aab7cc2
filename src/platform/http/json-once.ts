import express, { type Response } from 'express';
import { keptJson } from '../../core/frozen-json.js';

const expressJson = express.response.json;

/**
 * The app's `res.json` (set on app.response, so every response of the app has it): a body frozen with
 * its JSON (core/frozen-json.ts, the report cache's) is sent as those bytes, anything else as Express
 * sends it. The body is still what the response validator checks: it wraps `res.json` for each request
 * and calls this one with the body it validated; only the serialisation is shared. The app sets no
 * `json replacer`, `json spaces` or `json escape`, so Express's own `res.json` would send exactly
 * JSON.stringify(body).
 */
export function jsonOnce(this: Response, body: unknown): Response {
  const json = keptJson(body);
  if (json === undefined) return expressJson.call(this, body);
  // What Express's res.json sets for text; a Buffer is sent as it is, so the charset is said here.
  if (!this.get('Content-Type')) this.set('Content-Type', 'application/json; charset=utf-8');
  return this.send(json);
}
