import type { RequestHandler } from 'express';
import { badRequest } from '../errors.js';

/**
 * The first string inside value that holds U+0000, as a field label ("clientNames[1]"), or undefined.
 * A walk with its own stack, not recursion: however deep the value nests, the call stack stays flat.
 */
function findNul(value: unknown, label: string): string | undefined {
  const pending: [unknown, string][] = [[value, label]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, at] = next;
    if (typeof item === 'string') {
      if (item.includes('\u0000')) return at;
    } else if (Array.isArray(item)) {
      // Children pushed last to first, so the first offending field in document order is the one named.
      for (let i = item.length - 1; i >= 0; i--) pending.push([item[i], `${at}[${i}]`]);
    } else if (typeof item === 'object' && item !== null) {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        pending.push([child, at ? `${at}.${key}` : key]);
      }
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
