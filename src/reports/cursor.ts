import { refuse } from '../core/errors.js';
import { isUuid } from '../core/ids.js';

/** Position of a report in the list order: (inspectionDate, createdAt, id), all descending. */
export interface ListCursor {
  /** YYYY-MM-DD */
  date: string;
  /** YYYY-MM-DDTHH:MM:SS.ffffffZ (microseconds, as PostgreSQL keeps them) */
  createdAt: string;
  id: string;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.\d{6}Z$/;

/**
 * A day that exists, in years 0001 to 9999: the years a report's dates can have (inspectionDate is
 * refused outside them), all within PostgreSQL's range (which has no year 0000: it goes from 1 BC to 1 AD).
 */
function isCalendarDay(year: number, month: number, day: number): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return day <= days;
}

function isDate(text: string): boolean {
  const m = DATE.exec(text);
  return m !== null && isCalendarDay(Number(m[1]), Number(m[2]), Number(m[3]));
}

function isInstant(text: string): boolean {
  const m = INSTANT.exec(text);
  if (!m || !isCalendarDay(Number(m[1]), Number(m[2]), Number(m[3]))) return false;
  return Number(m[4]) < 24 && Number(m[5]) < 60 && Number(m[6]) < 60;
}

export function encodeCursor({ date, createdAt, id }: ListCursor): string {
  return Buffer.from(JSON.stringify([date, createdAt, id])).toString('base64url');
}

/**
 * The position in an `after` parameter, or undefined when it is not a cursor this service wrote:
 * anything that reaches the query is a value PostgreSQL takes (a real day and instant in its range,
 * a well-formed uuid), so a forged or damaged cursor is a 400, never a database error.
 */
export function decodeCursor(text: string): ListCursor | undefined {
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(parts) || parts.length !== 3 || !parts.every((p) => typeof p === 'string')) return undefined;
  const [date, createdAt, id] = parts as [string, string, string];
  if (!isDate(date) || !isInstant(createdAt) || !isUuid(id)) return undefined;
  const cursor = { date, createdAt, id };
  // Base64 decoding skips characters outside its alphabet: only the exact text written is a cursor.
  return encodeCursor(cursor) === text ? cursor : undefined;
}

/** The position a list's `after` (or `before`) parameter names: none without it, a 400 when it is no cursor. */
export function cursorParam(name: 'after' | 'before', text: string | undefined): ListCursor | undefined {
  if (text === undefined) return undefined;
  const cursor = decodeCursor(text);
  if (!cursor) throw refuse.badRequest(`${name} is not a valid cursor`);
  return cursor;
}
