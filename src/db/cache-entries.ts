/** What a cache may hold: at most `total` units of size, and one group at most `perGroup` of them. */
export interface CacheBudget {
  total: number;
  perGroup: number;
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
}

/** One group's entries, oldest first, and their size. */
interface Group {
  keys: Set<string>;
  size: number;
}

/**
 * The entries of a NotifiedCache under a budget, shared fairly: an entry larger than a group's share
 * is not kept; a group that would pass its share makes room among its own oldest entries; when the
 * whole budget is full, room is made in the group that holds the most. So one group's flood of
 * entries (or of large ones) never pushes out the entries of groups that hold less.
 */
export class CacheEntries<V> {
  private readonly budget: CacheBudget;
  private readonly entries = new Map<string, CacheEntry<V>>();
  private readonly groups = new Map<string, Group>();
  private readonly tagged = new Map<string, Set<string>>();
  private used = 0;

  constructor(budget: CacheBudget) {
    this.budget = { total: budget.total, perGroup: Math.min(budget.perGroup, budget.total) };
  }

  get(key: string): CacheEntry<V> | undefined {
    return this.entries.get(key);
  }

  /** How many entries are held, and their size (for tests and metrics). */
  get held(): { entries: number; size: number } {
    return { entries: this.entries.size, size: this.used };
  }

  /** Keeps the value at key (replacing what was there) unless it is larger than a group's share. */
  set(key: string, placement: Placement<V>, expiresAt: number): boolean {
    const { group, size, tag } = placement;
    if (size > this.budget.perGroup) return false;
    this.delete(key);
    const own = this.groups.get(group);
    while (own && own.size + size > this.budget.perGroup) this.dropOldestOf(own);
    while (this.used + size > this.budget.total) this.dropOldestOf(this.largestGroup());
    this.entries.set(key, { ...placement, expiresAt });
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
