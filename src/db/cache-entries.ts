/** What a cache may hold: at most `total` units of size, and one group at most `perGroup` of them. */
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

/** One group's entries, oldest first, and their size. */
interface Group {
  keys: Set<string>;
  size: number;
}

/**
 * The entries of a NotifiedCache under a budget, shared fairly: an entry larger than a group's share
 * is not kept; a group that would pass its share makes room among its own oldest entries, unless one of
 * them was kept less than minResidenceMs ago (then the new entry is not kept); when the whole budget is
 * full, room is made in the group that holds the most. So one group's flood of entries (or of large
 * ones) never pushes out the entries of groups that hold less, and a group reading more than its share
 * over and over (every page size of a list) does not turn its share over with each read: each entry
 * dropped before it is read again, each one (a megabyte for a maximal page) promoted and left for a full
 * collection of the garbage, which every company's requests wait for.
 */
export class CacheEntries<V> {
  private readonly budget: CacheBudget;
  private readonly entries = new Map<string, CacheEntry<V>>();
  private readonly groups = new Map<string, Group>();
  private readonly tagged = new Map<string, Set<string>>();
  private used = 0;

  constructor(budget: CacheBudget) {
    this.budget = { ...budget, perGroup: Math.min(budget.perGroup, budget.total) };
  }

  get(key: string): CacheEntry<V> | undefined {
    return this.entries.get(key);
  }

  /** How many entries are held, and their size (for tests and metrics). */
  get held(): { entries: number; size: number } {
    return { entries: this.entries.size, size: this.used };
  }

  /**
   * Keeps the value at key (replacing what was there) unless it is larger than a group's share, or room
   * for it in its group's share would drop an entry kept less than minResidenceMs before `now`.
   */
  set(key: string, placement: Placement<V>, expiresAt: number, now = Date.now()): boolean {
    const { group, size, tag } = placement;
    if (size > this.budget.perGroup) return false;
    this.delete(key);
    const own = this.groups.get(group);
    if (own && !this.roomWithin(own, size, now)) return false;
    while (own && own.size + size > this.budget.perGroup) this.dropOldestOf(own);
    while (this.used + size > this.budget.total) this.dropOldestOf(this.largestGroup());
    this.entries.set(key, { ...placement, expiresAt, keptAt: now });
    this.used += size;
    // Looked up again: making room may have dropped the group's last entry, and the group with it.
    const held = this.groupOf(group);
    held.size += size;
    held.keys.add(key);
    if (tag !== undefined) {
      const keys = this.tagged.get(tag) ?? new Set<string>();
      this.tagged.set(tag, keys.add(key));
    }
    return true;
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.used -= entry.size;
    const group = this.groups.get(entry.group)!;
    group.size -= entry.size;
    group.keys.delete(key);
    if (group.keys.size === 0) this.groups.delete(entry.group);
    if (entry.tag === undefined) return;
    const tagged = this.tagged.get(entry.tag)!;
    tagged.delete(key);
    if (tagged.size === 0) this.tagged.delete(entry.tag);
  }

  /** Drops every entry kept with the tag. */
  deleteTagged(tag: string): void {
    for (const key of this.tagged.get(tag) ?? []) this.delete(key);
  }

  clear(): void {
    this.entries.clear();
    this.groups.clear();
    this.tagged.clear();
    this.used = 0;
  }

  private groupOf(name: string): Group {
    let group = this.groups.get(name);
    if (!group) this.groups.set(name, (group = { keys: new Set(), size: 0 }));
    return group;
  }

  /** Whether size fits in the group's share once its oldest entries kept minResidenceMs ago or more are dropped. */
  private roomWithin(group: Group, size: number, now: number): boolean {
    let over = group.size + size - this.budget.perGroup;
    const settled = now - (this.budget.minResidenceMs ?? 0);
    for (const key of group.keys) {
      if (over <= 0) return true;
      const entry = this.entries.get(key)!;
      if (entry.keptAt > settled) return false;
      over -= entry.size;
    }
    return over <= 0;
  }

  /** The group holding the most (only looked for when the whole budget is full). */
  private largestGroup(): Group {
    let largest: Group | undefined;
    for (const group of this.groups.values()) if (!largest || group.size > largest.size) largest = group;
    return largest!;
  }

  private dropOldestOf(group: Group): void {
    this.delete(group.keys.values().next().value!);
  }
}
