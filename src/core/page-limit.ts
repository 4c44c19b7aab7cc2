import type { Request } from 'express';
import { refuse } from './errors.js';

export const DEFAULT_PAGE_LIMIT = 20;

/** What a `limit` must be, after its name: the validator's refusals and pageLimit's say the same. */
export const PAGE_LIMIT_WORDING = 'must be an integer from 1 to 100';

/**
 * The `limit` query parameter of a list (an integer from 1 to 100, default 20). The validator has
 * checked the range of its number, but it coerces "1e1" or "5.0" to one; the contract says an
 * integer, so the raw value must be digits only.
 */
export function pageLimit(req: Request): number {
  const raw = new URLSearchParams(req.originalUrl.split('?')[1] ?? '').get('limit');
  if (raw !== null && !/^\d+$/.test(raw)) throw refuse.badRequest(`limit ${PAGE_LIMIT_WORDING}`);
  return (req.query as { limit?: number }).limit ?? DEFAULT_PAGE_LIMIT;
}
