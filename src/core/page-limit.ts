import type { Request } from 'express';
import { badRequest } from './errors.js';

export const DEFAULT_PAGE_LIMIT = 20;

/**
 * The `limit` query parameter of a list (an integer from 1 to 100, default 20). The validator has
 * checked the range of its number, but it coerces "1e1" or "5.0" to one; the contract says an
 * integer, so the raw value must be digits only.
 */
export function pageLimit(req: Request): number {
  const raw = new URLSearchParams(req.originalUrl.split('?')[1] ?? '').get('limit');
  if (raw !== null && !/^\d+$/.test(raw)) throw badRequest('limit must be an integer from 1 to 100');
  return (req.query as { limit?: number }).limit ?? DEFAULT_PAGE_LIMIT;
}
