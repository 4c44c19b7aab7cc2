import { expect } from 'chai';
import { CacheEntries } from '../../src/db/cache-entries.js';

/** The budget of a notified cache, shared fairly between its groups (no database needed). */
describe('cache entries: a budget shared fairly between groups', () => {
  const keysOf = (entries: CacheEntries<string>, keys: string[]) => keys.filter((key) => entries.get(key));
  const put = (entries: CacheEntries<string>, key: string, group: string, size: number, tag?: string) =>
    entries.set(key, { value: key, group, size, tag }, Date.now() + 60_000);

  it("makes room among a group's own oldest entries when it would pass its share", () => {
    const entries = new CacheEntries<string>({ total: 100, perGroup: 30 });
    for (const key of ['a1', 'a2', 'a3']) put(entries, key, 'a', 10);
    put(entries, 'b1', 'b', 10);
    put(entries, 'a4', 'a', 10);
    expect(keysOf(entries, ['a1', 'a2', 'a3', 'a4', 'b1'])).to.deep.equal(['a2', 'a3', 'a4', 'b1']);
    expect(entries.held).to.deep.equal({ entries: 4, size: 40 });
  });

  it('when the whole budget is full, makes room in the group that holds the most', () => {
    const entries = new CacheEntries<string>({ total: 50, perGroup: 30 });
    put(entries, 'b1', 'b', 10); // the oldest entry of all, but in a group that holds less
    for (const key of ['a1', 'a2', 'a3']) put(entries, key, 'a', 10);
    put(entries, 'c1', 'c', 10);
    put(entries, 'c2', 'c', 10); // the budget is full: a, the largest, gives up its oldest
    expect(keysOf(entries, ['a1', 'a2', 'a3', 'b1', 'c1', 'c2'])).to.deep.equal(['a2', 'a3', 'b1', 'c1', 'c2']);
    expect(entries.held.size).to.equal(50);
  });

  it('keeps nothing larger than a share, and a replaced entry counts once, as the newest', () => {
    const entries = new CacheEntries<string>({ total: 100, perGroup: 20 });
    expect(put(entries, 'huge', 'a', 21)).to.equal(false);
    expect(entries.get('huge')).to.equal(undefined);
    put(entries, 'a1', 'a', 10);
    put(entries, 'a2', 'a', 10);
    put(entries, 'a1', 'b', 5); // moves to another group
    put(entries, 'a3', 'a', 10);
    expect(keysOf(entries, ['a1', 'a2', 'a3'])).to.deep.equal(['a1', 'a2', 'a3']);
    expect(entries.get('a1')!.group).to.equal('b');
    expect(entries.held).to.deep.equal({ entries: 3, size: 25 });
  });

  it("does not drop a group's entry kept less than minResidenceMs ago for another of the group: the new one is not kept", () => {
    const entries = new CacheEntries<string>({ total: 100, perGroup: 20, minResidenceMs: 1_000 });
    const at = (key: string, group: string, now: number) =>
      entries.set(key, { value: key, group, size: 10 }, now + 60_000, now);
    at('a1', 'a', 0);
    at('a2', 'a', 500);
    expect(at('a3', 'a', 999), 'a1 kept 999 ms ago').to.equal(false);
    expect(keysOf(entries, ['a1', 'a2', 'a3'])).to.deep.equal(['a1', 'a2']);
    // Another group is not held back by a's entries, however young.
    expect(at('b1', 'b', 999)).to.equal(true);
    // A second after a1 was kept, it makes room; a2 (kept 500 ms before) is still young, and stays.
    expect(at('a3', 'a', 1_000)).to.equal(true);
    expect(keysOf(entries, ['a1', 'a2', 'a3', 'b1'])).to.deep.equal(['a2', 'a3', 'b1']);
    expect(at('a4', 'a', 1_200), 'a2 kept 700 ms ago').to.equal(false);
    expect(entries.held).to.deep.equal({ entries: 3, size: 30 });
  });

  it('drops every entry of a tag together, and nothing else', () => {
    const entries = new CacheEntries<string>({ total: 100, perGroup: 100 });
    put(entries, 'report', 'a', 1);
    put(entries, 'page 1', 'a', 1, 'pages a');
    put(entries, 'page 2', 'a', 1, 'pages a');
    put(entries, 'page b', 'b', 1, 'pages b');
    entries.deleteTagged('pages a');
    expect(keysOf(entries, ['report', 'page 1', 'page 2', 'page b'])).to.deep.equal(['report', 'page b']);
    entries.clear();
    expect(entries.held).to.deep.equal({ entries: 0, size: 0 });
  });
});
