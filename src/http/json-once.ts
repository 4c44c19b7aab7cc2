import express, { type Response } from 'express';

/**
 * Bodies serialised once: the report cache keeps each report and page frozen together with its JSON,
 * and an answer with such a body sends that text instead of serialising it again (a page of 20 reports
 * is about 16 KB). The body is still what the response validator checks (it wraps `res.json` for each
 * request and calls this one with the body it validated); only the serialisation is shared, and a
 * frozen body's JSON cannot differ from the text kept for it. The app sets no `json replacer`, `json
 * spaces` or `json escape`, so Express's own `res.json` would send exactly JSON.stringify(body).
 */
const serialized = new WeakMap<object, Buffer>();

/**
 * Freezes value and everything in it, and keeps its JSON, encoded once, for every answer that sends it:
 * sending text would encode it anew for each answer (a maximal page is a megabyte a time, allocated
 * where only a full garbage collection frees it).
 */
export function freezeWithJson<T extends object>(value: T, json: Buffer): T {
  serialized.set(deepFreeze(value), json);
  return value;
}

function deepFreeze(value: object): object {
  for (const child of Object.values(value)) {
    if (typeof child === 'object' && child !== null && !Object.isFrozen(child)) deepFreeze(child);
  }
  return Object.freeze(value);
}

const expressJson = express.response.json;

/**
 * The app's `res.json` (set on app.response, so every answer of the app has it): the response validator
 * wraps it per request and calls it with the body it validated.
 */
export function jsonOnce(this: Response, body: unknown): Response {
  const json = typeof body === 'object' && body !== null ? serialized.get(body) : undefined;
  if (json === undefined) return expressJson.call(this, body);
  // What Express's res.json sets for text; a Buffer is sent as it is, so the charset is said here.
  if (!this.get('Content-Type')) this.set('Content-Type', 'application/json; charset=utf-8');
  return this.send(json);
}
