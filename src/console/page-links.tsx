import type { Page, PageAt } from '../db/keyset.js';

/**
 * The links of a list paged both ways (db/keyset.ts), and the line saying whether more follow. A page with
 * several lists keeps each one's position in its own query parameters (`peopleAfter`, `invitationsBefore`), so
 * paging one list leaves the others where they are.
 */

/** Each list's position on the page, by its name in the query. */
export type ListPositions = Record<string, PageAt>;

/** The lists' positions in a request's query (a value that is no text is none). */
export function listPositionsOf(query: Record<string, unknown>, lists: readonly string[]): ListPositions {
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return Object.fromEntries(
    lists.map((list) => [list, { after: text(query[`${list}After`]), before: text(query[`${list}Before`]) }]),
  );
}

/** The page's address with one list moved to `at`, the others kept, scrolled to the list (`anchor`). */
export function listPositionHref(
  path: string,
  positions: ListPositions,
  list: string,
  at: PageAt,
  anchor: string,
): string {
  const query = new URLSearchParams();
  for (const [name, { after, before }] of Object.entries({ ...positions, [list]: at })) {
    if (after) query.set(`${name}After`, after);
    if (before) query.set(`${name}Before`, before);
  }
  const text = query.toString();
  return `${path}${text ? `?${text}` : ''}#${anchor}`;
}

/** The addresses of the pages above and below a page of the list (none where nothing lies beyond). */
export function neighbours<T>(page: Page<T>, idOf: (row: T) => string, href: (at: PageAt) => string) {
  const [first, last] = [page.rows[0], page.rows.at(-1)];
  return {
    up: page.before && first ? href({ before: idOf(first) }) : undefined,
    down: page.after && last ? href({ after: idOf(last) }) : undefined,
  };
}

interface PageLinksProps {
  /** The list's rows, one and many ("person", "people"). */
  what: readonly [string, string];
  /** The words of the links up and down the list. */
  words?: readonly [string, string];
  up?: string;
  down?: string;
}

export function PageLinks({ what: [one, many], words = ['Newer', 'Older'], up, down }: PageLinksProps) {
  return (
    <nav aria-label={`Pages of ${many}`}>
      <p>
        {up && (
          <a href={up}>
            {words[0]} {many}
          </a>
        )}{' '}
        {down && (
          <a href={down}>
            {words[1]} {many}
          </a>
        )}
      </p>
      <p>{up || down ? `More ${many} than this page: follow the links.` : `Every ${one} is on this page.`}</p>
    </nav>
  );
}
