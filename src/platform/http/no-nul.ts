import type { RequestHandler } from 'express';
import { refuse } from '../../core/errors.js';
import { quoted } from '../../core/quoted.js';

const ILL_FORMED = 'must be well-formed Unicode text (no invalid UTF-8, no lone surrogate such as \\ud800)';

/** Why PostgreSQL could not store this text as it was sent, or undefined. */
function problemOf(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain the NUL character (\\u0000)';
  // A lone surrogate (JSON "\ud800") would be stored as U+FFFD: two different values would become one.
  if (!text.isWellFormed()) return ILL_FORMED;
  return undefined;
}

/**
 * Whether any string inside value (field names included) cannot be stored as sent: the walk of
 * findUnstorableText without the fields' labels, which only a value with such a string needs.
 */
function holdsUnstorableText(value: unknown): boolean {
  const pending = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === 'string') {
      if (problemOf(item)) return true;
    } else if (Array.isArray(item)) {
      for (const child of item) pending.push(child);
    } else if (typeof item === 'object' && item !== null) {
      for (const key of Object.keys(item)) pending.push(key, (item as Record<string, unknown>)[key]);
    }
  }
  return false;
}

/**
 * The first string inside value (field names included) that cannot be stored as sent, as
 * "<field label> <why>" ("clientNames[1] must not contain …"), or undefined.
 * A walk with its own stack, not recursion: however deep the value nests, the call stack stays flat.
 */
export function findUnstorableText(value: unknown, label = ''): string | undefined {
  if (!holdsUnstorableText(value)) return undefined;
  const pending: [unknown, string][] = [[value, label]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, at] = next;
    if (typeof item === 'string') {
      const problem = problemOf(item);
      if (problem) return `${quoted(at || 'body')} ${problem}`;
    } else if (Array.isArray(item)) {
      // Children pushed last to first, so the first offending field in document order is the one named.
      for (let i = item.length - 1; i >= 0; i--) pending.push([item[i], `${at}[${i}]`]);
    } else if (typeof item === 'object' && item !== null) {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        const field = at ? `${at}.${key.toWellFormed()}` : key.toWellFormed();
        pending.push([child, field], [key, `field name ${field}`]);
      }
    }
  }
  return undefined;
}

/** Decodes a query string's name or value as Node's query parser does, or undefined when its escapes are not UTF-8. */
function decodeQueryPart(part: string): string | undefined {
  try {
    // A "%" that starts no escape stays as it is, as the query parser leaves it.
    return decodeURIComponent(part.replace(/\+/g, ' ').replace(/%(?![0-9a-f]{2})/gi, '%25'));
  } catch {
    return undefined;
  }
}

/**
 * The first query parameter (name or value) that cannot be stored as sent. The raw query is read:
 * the query parser has already replaced escapes of invalid UTF-8 (%FF) with U+FFFD.
 */
function findUnstorableQuery(url: string): string | undefined {
  const query = url.split('?')[1] ?? '';
  for (const pair of query ? query.split('&') : []) {
    const [rawName = '', rawValue = ''] = pair.split(/=(.*)/s);
    const name = decodeQueryPart(rawName);
    if (name === undefined) return `query parameter names ${ILL_FORMED}`;
    const value = decodeQueryPart(rawValue);
    const problem = problemOf(name) ?? (value === undefined ? ILL_FORMED : problemOf(value));
    if (problem) return `${quoted(name.toWellFormed())} ${problem}`;
  }
  return undefined;
}

/**
 * PostgreSQL text cannot hold the NUL character, and text that is not well-formed Unicode would be
 * stored changed: refuse either up front, naming the field or query parameter.
 */
export const rejectUnstorableText: RequestHandler = (req, _res, next) => {
  const found =
    findUnstorableText(req.body) ?? findUnstorableQuery(req.originalUrl) ?? findUnstorableText(req.path, 'path');
  if (found) throw refuse.badRequest(found);
  next();
};
