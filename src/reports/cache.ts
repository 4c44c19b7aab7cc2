import { performance } from 'node:perf_hooks';
import type { Report } from '../api-types.js';
import type { ChangeFeed } from '../db/change-feed.js';
import { NotifiedCache, type Change, type Lookup, type Placement } from '../db/notified-cache.js';
import type { Queryable } from '../db/pool.js';
import { freezeWithJson } from '../core/frozen-json.js';
import { isUuid } from '../core/ids.js';
import { findForCompany, listForCompany, type ListOptions, type ReportPage } from './read.js';

/** Where the partner API reads reports and pages. `since`: when the request arrived (performance.now()). */
export interface ReportReads {
  find(companyId: string, id: string, since?: number): Promise<Report | undefined>;
  list(companyId: string, options: ListOptions, since?: number): Promise<ReportPage>;
}

/** No cache: the database on every read (what the cache falls back to). */
export const databaseReports = (db: Queryable): ReportReads => ({
  find: (companyId, id) => findForCompany(db, companyId, id),
  list: (companyId, options) => listForCompany(db, companyId, options),
});

/** What the cache may hold, in bytes of the JSON it responds with. */
export const REPORT_CACHE_BYTES = 8 * 1024 * 1024;
/** One company's share of the cache, at most: a few of its maximal pages (about 1 MiB each, PAGE_BUDGET_BYTES). */
export const COMPANY_SHARE = 1 / 4;
/** Past this age an entry is read again, whatever was (or was not) notified. */
const MAX_AGE_MS = 60_000;
/** The channel db/migrations/10_report_change_notify.sql notifies with "<company id> <report id>" (or "*"). */
const REPORT_CHANNEL = 'report_changed';
/** A company's entry kept less than this long ago is not dropped for another of its own (db/cache-entries.ts). */
const MIN_RESIDENCE_MS = 1_000;

type Cached = Report | ReportPage;

/**
 * Reports and list pages cached in the process, so a repeated read costs no query, while a change
 * committed by any process shows on the next request everywhere: a NotifiedCache (db/notified-cache.ts)
 * on REPORT_CHANNEL. A report's write drops it and its company's pages (migration 10); a delete drops
 * everything. A company holds at most COMPANY_SHARE of the bytes, so one company's maximal pages never
 * push out the others' entries. Entries are frozen, each with the JSON its responses send.
 */
export class ReportCache implements ReportReads {
  private readonly db: Queryable;
  private readonly companyBytes: number;
  private readonly cache: NotifiedCache<Cached>;

  constructor({
    db,
    feed,
    maxBytes = REPORT_CACHE_BYTES,
    companyBytes = Math.floor(maxBytes * COMPANY_SHARE),
    minResidenceMs = MIN_RESIDENCE_MS,
  }: {
    db: Queryable;
    feed: ChangeFeed;
    maxBytes?: number;
    /** One company's share, at most. */
    companyBytes?: number;
    /** An entry kept more recently is not dropped for another of its company (0: the oldest always goes). */
    minResidenceMs?: number;
  }) {
    this.db = db;
    this.companyBytes = Math.min(companyBytes, maxBytes);
    this.cache = new NotifiedCache({
      feed,
      channel: REPORT_CHANNEL,
      changeOf,
      maxAgeMs: MAX_AGE_MS,
      budget: { total: maxBytes, perGroup: this.companyBytes, minResidenceMs },
    });
  }

  async find(companyId: string, id: string, since = performance.now()): Promise<Report | undefined> {
    if (!isUuid(id)) return undefined;
    // Ids are case-insensitive (uuid): the key is the form the database writes and notifies.
    const key = reportKey(companyId, id.toLowerCase());
    return this.cache.get(
      key,
      this.lookup(companyId, false, () => findForCompany(this.db, companyId, id)),
      since,
    );
  }

  async list(companyId: string, options: ListOptions, since = performance.now()): Promise<ReportPage> {
    const { limit, after, before, restId, status, inspectorEmail } = options;
    const key = `page ${companyId} ${JSON.stringify([limit, after, before, restId, status, inspectorEmail])}`;
    return this.cache.get(
      key,
      this.lookup(companyId, true, () => listForCompany(this.db, companyId, options)),
      since,
    );
  }

  /** A read of the company's reports: any change of them makes it stale; kept frozen with its JSON. */
  private lookup<T extends Cached | undefined>(
    companyId: string,
    isPage: boolean,
    read: () => Promise<T>,
  ): Lookup<T, Cached> {
    const keep = (value: T) => (value === undefined ? undefined : this.placed(companyId, isPage, value));
    return { scope: companyId, read, keep };
  }

  private placed(companyId: string, isPage: boolean, value: Cached): Placement<Cached> | undefined {
    // What a response sends: the report, or the page's reports. Kept frozen with its JSON (core/frozen-json.ts).
    const page = isPage ? (value as ReportPage) : undefined;
    const body = page ? page.reports : value;
    const json = Buffer.from(JSON.stringify(body));
    if (json.length > this.companyBytes) return undefined;
    freezeWithJson(body, json);
    if (page) Object.freeze(Object.freeze(page).next);
    return { value, group: companyId, size: json.length, tag: page ? pagesOf(companyId) : reportsOf(companyId) };
  }
}

const reportKey = (companyId: string, id: string) => `report ${companyId} ${id}`;
/** The tag of a company's cached list pages: any change of its reports drops them all. */
const pagesOf = (companyId: string) => `pages ${companyId}`;

/** The tag of a company's cached reports: a delete of its reports drops them all. */
const reportsOf = (companyId: string) => `reports ${companyId}`;

/**
 * A report was written ("<company> <report>"): it and every cached page of its company go; reports of a
 * company deleted ("<company> *", migration 15): all of the company's; "*" (a truncate): everything.
 */
function changeOf(payload: string): Change | undefined {
  const [companyId, id] = payload.split(' ');
  if (!companyId || !id) return undefined;
  if (id === '*') return { scope: companyId, tags: [pagesOf(companyId), reportsOf(companyId)] };
  return { scope: companyId, keys: [reportKey(companyId, id)], tags: [pagesOf(companyId)] };
}
