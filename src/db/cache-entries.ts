// What a cache may hold: at most `total` units of size, and one group at most `perGroup` of them.

import { CompanyCounts } from '../core/company-counts.js';

export interface CacheBudget {
  total: number;
  perGroup: number;
  /**
   * A group's entry kept less than this long ago (ms) is not dropped to make room for another of the
   * same group: the new one is not kept instead (default 0: the oldest always goes).
   */
  minResidenceMs?: number;
}

/** Where a value is kept: its group (whose share it counts against), its size, an optional tag. */
export interface Placement<V> {
  value: V;
  /** The share it counts against (a company's; for keys, known apart from unknown). */
  group: string;
  /** In the budget's unit (bytes of JSON; 1 for a count of entries). */
  size: number;
  /** Entries that one kind of change drops together (a company's list pages). */
  tag?: string;
}

export interface CacheEntry<V> extends Placement<V> {
  expiresAt: number;
  /** When it was kept (Date.now()). */
  keptAt: number;
}

/**
 * The entries of a NotifiedCache under a budget shared fairly between groups: a group past its share
 * evicts its own oldest entries (unless kept less than minResidenceMs ago, so a group cycling through
 * more than its share does not churn large entries into full garbage collections), and a full budget
 * evicts from the group that holds the most, so one group's flood never pushes out the others.
 */
export class CacheEntries<V> {
  private readonly budget: CacheBudget;
  private readonly entries = new Map<string, CacheEntry<V>>();
  /** Each group's keys, oldest first, and what each group holds (only groups holding some). */
  private readonly keysOf = new Map<string, Set<string>>();
  private sizes = new CompanyCounts();
  private readonly tagged = new Map<string, Set<string>>();

  constructor(budget: CacheBudget) {
    this.budget = { ...budget, perGroup: Math.min(budget.perGroup, budget.total) };
  }

  get(key: string): CacheEntry<V> | undefined {
    return this.entries.get(key);
  }

  /** How many entries are held, and their size (for tests and metrics). */
  get held(): { entries: number; size: number } {
    return { entries: this.entries.size, size: this.sizes.total };
  }

  /**
   * Keeps the value at key (replacing what was there) unless it is larger than a group's share, or room
   * for it in its group's share would drop an entry kept less than minResidenceMs before `now`.
   */
  set(key: string, placement: Placement<V>, expiresAt: number, now = Date.now()): boolean {
    const { group, size, tag } = placement;
    if (size > this.budget.perGroup) return false;
    this.delete(key);
    if (!this.roomWithin(group, size, now)) return false;
    while (this.sizes.get(group) + size > this.budget.perGroup) this.dropOldestOf(group);
    while (this.sizes.total + size > this.budget.total) this.dropOldestOf(this.largestGroup());
    this.entries.set(key, { ...placement, expiresAt, keptAt: now });
    this.sizes.add(group, size);
    addKey(this.keysOf, group, key);
    if (tag !== undefined) addKey(this.tagged, tag, key);
    return true;
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.sizes.remove(entry.group, entry.size);
    deleteKey(this.keysOf, entry.group, key);
    if (entry.tag !== undefined) deleteKey(this.tagged, entry.tag, key);
  }

  /** Drops every entry kept with the tag. */
  deleteTagged(tag: string): void {
    for (const key of this.tagged.get(tag) ?? []) this.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.keysOf.clear();
    this.sizes = new CompanyCounts();
    this.tagged.clear();
  }

  /** Whether size fits in the group's share once its oldest entries kept minResidenceMs ago or more are dropped. */
  private roomWithin(group: string, size: number, now: number): boolean {
    let over = this.sizes.get(group) + size - this.budget.perGroup;
    const settled = now - (this.budget.minResidenceMs ?? 0);
    for (const key of this.keysOf.get(group) ?? []) {
      if (over <= 0) return true;
      const entry = this.entries.get(key)!;
      if (entry.keptAt > settled) return false;
      over -= entry.size;
    }
    return over <= 0;
  }

  /** The group holding the most (only looked for when the whole budget is full). */
  private largestGroup(): string {
    let largest: [string, number] | undefined;
    for (const held of this.sizes.entries()) if (!largest || held[1] > largest[1]) largest = held;
    return largest![0];
  }

  private dropOldestOf(group: string): void {
    this.delete(this.keysOf.get(group)!.values().next().value!);
  }
}

/** Adds key to the set at name, made when it is the first. */
function addKey(sets: Map<string, Set<string>>, name: string, key: string): void {
  const keys = sets.get(name) ?? new Set<string>();
  sets.set(name, keys.add(key));
}

/** Deletes key from the set at name, and the set once it is empty. */
function deleteKey(sets: Map<string, Set<string>>, name: string, key: string): void {
  const keys = sets.get(name)!;
  keys.delete(key);
  if (keys.size === 0) sets.delete(name);
}
