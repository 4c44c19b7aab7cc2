import express, { type Response } from 'express';
import { keptJson } from '../../core/frozen-json.js';

const expressJson = express.response.json;

/**
 * The app's `res.json`: a body frozen with its JSON (core/frozen-json.ts, the report cache's) is sent as
 * those bytes, anything else as Express sends it. The response validator still checks every body; only
 * the serialisation is shared (the app sets no json replacer, spaces or escape, so the bytes are the same).
 */
export function jsonOnce(this: Response, body: unknown): Response {
  const json = keptJson(body);
  if (json === undefined) return expressJson.call(this, body);
  // What Express's res.json sets for text; a Buffer is sent as it is, so the charset is said here.
  if (!this.get('Content-Type')) this.set('Content-Type', 'application/json; charset=utf-8');
  return this.send(json);
}
