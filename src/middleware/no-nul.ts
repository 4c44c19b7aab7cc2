import type { RequestHandler } from 'express';
import { badRequest } from '../errors.js';

/** The first string inside value that holds U+0000, as a field label ("clientNames[1]"), or undefined. */
function findNul(value: unknown, label: string): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? label : undefined;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = findNul(item, `${label}[${i}]`);
      if (found) return found;
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const found = findNul(item, label ? `${label}.${key}` : key);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * PostgreSQL text cannot hold the NUL character, so a value with one would fail deep in a query:
 * refuse it up front, naming the field.
 */
export const rejectNulCharacters: RequestHandler = (req, _res, next) => {
  const field = findNul(req.body, '') ?? findNul(req.query, '') ?? findNul(req.path, 'path');
  if (field) throw badRequest(`${field || 'body'} must not contain the NUL character (\\u0000)`);
  next();
};
