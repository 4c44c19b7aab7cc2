import { performance } from 'node:perf_hooks';
import type { Report } from '../api-types.js';
import { REPORT_CHANNEL, type ChangeFeed } from '../db/change-feed.js';
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

/** What the cache may hold, in bytes of the JSON it answers with. */
export const REPORT_CACHE_BYTES = 8 * 1024 * 1024;
/** One company's share of the cache, at most: a few of its maximal pages (about 1 MiB each, PAGE_BUDGET_BYTES). */
export const COMPANY_SHARE = 1 / 4;
/** Past this age an entry is read again, whatever was (or was not) notified. */
const MAX_AGE_MS = 60_000;

interface Entry {
  value: Report | ReportPage;
  companyId: string;
  bytes: number;
  expiresAt: number;
}
interface Lookup {
  companyId: string;
  stale: boolean;
}
/** What one company holds: its entries' keys, oldest first, and their bytes. */
interface Holding {
  keys: Set<string>;
  pages: Set<string>;
  bytes: number;
}

/**
 * Reports and list pages cached in the process, so a repeated read costs no query, while a change
 * committed by any process shows on the very next request everywhere — the key cache's design
 * (ApiKeyCache), on the same ChangeFeed: every write of a report notifies "<company> <report>"
 * (db/migrations/10_report_change_notify.sql), which drops that report and every cached page of the
 * company; before trusting an entry a request waits for the feed's barrier (usually the one its key
 * check already waited for). Whenever the feed is down, slow or reconnecting the cache is emptied and
 * reads go to the database until it listens again; a read that a change (or a lost feed) overtakes is
 * answered but not kept. Bounded by REPORT_CACHE_BYTES and MAX_AGE_MS, and shared fairly: a company
 * holds at most COMPANY_SHARE of the bytes (its own oldest entries make room for its new ones), and
 * when the whole cache is full room is made in the company that holds the most, so one company's
 * maximal pages never push out the entries of companies that hold less. Entries are shared by the
 * requests that read them, frozen, each with the JSON its answers send.
 */
export class ReportCache implements ReportReads {
  private readonly db: Queryable;
  private readonly feed: ChangeFeed;
  private readonly maxBytes: number;
  private readonly companyBytes: number;
  private readonly entries = new Map<string, Entry>();
  /** Each company's entries (its pages apart: any change of its reports drops them). */
  private readonly holdings = new Map<string, Holding>();
  private readonly lookups = new Set<Lookup>();
  private bytes = 0;

  constructor({
    db,
    feed,
    maxBytes = REPORT_CACHE_BYTES,
    companyBytes = Math.floor(maxBytes * COMPANY_SHARE),
  }: {
    db: Queryable;
    feed: ChangeFeed;
    maxBytes?: number;
    /** One company's share, at most. */
    companyBytes?: number;
  }) {
    this.db = db;
    this.feed = feed;
    this.maxBytes = maxBytes;
    this.companyBytes = Math.min(companyBytes, maxBytes);
    feed.on(REPORT_CHANNEL, (payload) => this.changed(payload));
    feed.onReset(() => this.forgetAll());
  }

  async find(companyId: string, id: string, since = performance.now()): Promise<Report | undefined> {
    if (!isUuid(id)) return undefined;
    // Ids are case-insensitive (uuid): the key is the form the database writes and notifies.
    const key = `report ${companyId} ${id.toLowerCase()}`;
    return ((await this.cached(key, since)) ??
      this.read(key, companyId, () => findForCompany(this.db, companyId, id))) as Promise<Report | undefined>;
  }

  async list(companyId: string, options: ListOptions, since = performance.now()): Promise<ReportPage> {
    const { limit, after, restId } = options;
    const key = `page ${companyId} ${JSON.stringify([limit, after?.date, after?.createdAt, after?.id, restId])}`;
    return ((await this.cached(key, since)) ??
      this.read(key, companyId, () => listForCompany(this.db, companyId, options))) as Promise<ReportPage>;
  }

  /** The entry's value if it is fresh and every change committed before `since` has been applied. */
  private async cached(key: string, since: number): Promise<Entry['value'] | undefined> {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.drop(key);
      return undefined;
    }
    if (!(await this.feed.barrier(since))) return undefined;
    return this.entries.get(key)?.value; // the barrier may just have delivered its change
  }

  private async read<T extends Report | ReportPage | undefined>(
    key: string,
    companyId: string,
    fromDatabase: () => Promise<T>,
  ): Promise<T> {
    const lookup: Lookup = { companyId, stale: !this.feed.listening };
    this.lookups.add(lookup);
    try {
      const value = await fromDatabase();
      if (value !== undefined && !lookup.stale) this.keep(key, companyId, value);
      return value;
    } finally {
      this.lookups.delete(lookup);
    }
  }

  private keep(key: string, companyId: string, value: Report | ReportPage): void {
    // What an answer sends: the report, or the page's reports. Kept frozen with its JSON (core/frozen-json.ts).
    const page = key.startsWith('page ') ? (value as ReportPage) : undefined;
    const body = page ? page.reports : value;
    const json = Buffer.from(JSON.stringify(body));
    const bytes = json.length;
    if (bytes > this.companyBytes) return;
    freezeWithJson(body, json);
    if (page) Object.freeze(Object.freeze(page).next);
    this.drop(key);
    const own = this.holdings.get(companyId);
    while (own && own.bytes + bytes > this.companyBytes) this.dropOldestOf(own);
    while (this.bytes + bytes > this.maxBytes) this.dropOldestOf(this.largestHolding());
    this.entries.set(key, { value, companyId, bytes, expiresAt: Date.now() + MAX_AGE_MS });
    this.bytes += bytes;
    // Looked up again: making room may have dropped the company's last entry, and its holding with it.
    const holding = this.holdingOf(companyId);
    holding.bytes += bytes;
    holding.keys.add(key);
    if (page) holding.pages.add(key);
  }

  private holdingOf(companyId: string): Holding {
    let holding = this.holdings.get(companyId);
    if (!holding) this.holdings.set(companyId, (holding = { keys: new Set(), pages: new Set(), bytes: 0 }));
    return holding;
  }

  /** The company holding the most bytes (only looked for when the whole cache is full). */
  private largestHolding(): Holding {
    let largest: Holding | undefined;
    for (const holding of this.holdings.values()) if (!largest || holding.bytes > largest.bytes) largest = holding;
    return largest!;
  }

  private dropOldestOf(holding: Holding): void {
    this.drop(holding.keys.values().next().value!);
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
    const holding = this.holdings.get(entry.companyId)!;
    holding.bytes -= entry.bytes;
    holding.keys.delete(key);
    holding.pages.delete(key);
    if (holding.keys.size === 0) this.holdings.delete(entry.companyId);
  }

  /** A report was written: it and every cached page of its company go, and reads in flight are not kept. */
  private changed(payload: string): void {
    const [companyId, id] = payload.split(' ');
    if (!companyId || !id) {
      this.forgetAll();
      return;
    }
    this.drop(`report ${companyId} ${id}`);
    for (const key of this.holdings.get(companyId)?.pages ?? []) this.drop(key);
    for (const lookup of this.lookups) if (lookup.companyId === companyId) lookup.stale = true;
  }

  private forgetAll(): void {
    this.entries.clear();
    this.holdings.clear();
    this.bytes = 0;
    for (const lookup of this.lookups) lookup.stale = true;
  }
}
