import { isUuid } from '../core/ids.js';

/**
 * Keyset paging both ways, for a list in a fixed order that ends in its rows' ids (so no two rows tie):
 * a page is read from one of its rows, given by id, downwards (`after` it) or upwards (`before` it), one
 * row more than the page telling whether more lie beyond. A cursor with nothing past it (not an id, a row
 * of another company's, a row gone since) is the first page, so a link never shows what the list does not
 * hold.
 */

/** Where a page starts: below the row of one id (`after`), or above it (`before`). */
export interface PageAt {
  after?: string;
  before?: string;
}

/** A page of rows in the list's order, and whether rows lie above its first (`before`) and below its last (`after`). */
export interface Page<T> {
  rows: T[];
  before: boolean;
  after: boolean;
}

/**
 * A list's statement: at most `limit` rows past the cursor's row (null: from the top), in the list's
 * order, or in reverse order above it when `backwards` (keysetOrder gives the SQL of each way).
 */
export type ReadPage<T> = (cursor: string | null, backwards: boolean, limit: number) => Promise<T[]>;

/** The comparison with the cursor's row and the direction of the sort, for a list in `order` read either way. */
export function keysetOrder(order: 'ASC' | 'DESC', backwards: boolean): { beyond: '<' | '>'; order: 'ASC' | 'DESC' } {
  const ascending = (order === 'ASC') !== backwards;
  return { beyond: ascending ? '>' : '<', order: ascending ? 'ASC' : 'DESC' };
}

/** The page of `limit` rows at `at` (see the file's overview). */
export async function keysetPage<T>(at: PageAt, limit: number, read: ReadPage<T>): Promise<Page<T>> {
  const cursor = [at.before, at.after].find((id) => id !== undefined && isUuid(id));
  const backwards = cursor !== undefined && cursor === at.before;
  const rows = await read(cursor ?? null, backwards, limit + 1);
  if (rows.length === 0 && cursor !== undefined) return keysetPage({}, limit, read);
  const page = rows.slice(0, limit);
  const more = rows.length > limit;
  // Rows came back past a cursor, so its row exists and lies on the other side of the page.
  if (backwards) return { rows: page.reverse(), before: more, after: true };
  return { rows: page, before: cursor !== undefined, after: more };
}
