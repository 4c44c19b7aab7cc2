import { expect } from 'chai';
import { CompanyCounts } from '../../src/core/company-counts.js';

describe('CompanyCounts: what each company holds now, and all together', () => {
  it('adds and removes per company, keeping the total', () => {
    const counts = new CompanyCounts();
    counts.add('a', 1);
    counts.add('b', 300);
    counts.add('a', 2);
    counts.remove('b', 100);
    expect(counts.get('a')).to.equal(3);
    expect(counts.get('b')).to.equal(200);
    expect(counts.total).to.equal(203);
  });

  it('returns 0 for a company that holds nothing', () => {
    const counts = new CompanyCounts();
    expect(counts.get('a')).to.equal(0);
    expect(counts.total).to.equal(0);
  });

  it('holds an entry only for the companies holding something, in the order they came', () => {
    const counts = new CompanyCounts();
    counts.add('a', 1);
    counts.add('b', 2);
    counts.add('c', 0);
    counts.add('a', 1);
    expect([...counts.entries()]).to.deep.equal([
      ['a', 2],
      ['b', 2],
    ]);
    counts.remove('a', 2);
    counts.add('a', 1);
    expect([...counts.entries()]).to.deep.equal([
      ['b', 2],
      ['a', 1],
    ]);
    counts.remove('b', 2);
    counts.remove('a', 1);
    expect([...counts.entries()]).to.deep.equal([]);
    expect(counts.total).to.equal(0);
  });
});
