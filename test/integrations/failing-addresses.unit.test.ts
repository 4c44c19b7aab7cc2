import { expect } from 'chai';
import { CompanyCounts } from '../../src/core/company-counts.js';
import { FailingAddresses } from '../../src/integrations/webhooks/failing-addresses.js';

/** The attempts in flight of each company. */
function held(entries: [string, number][]): CompanyCounts {
  const counts = new CompanyCounts();
  for (const [companyId, n] of entries) counts.add(companyId, n);
  return counts;
}

describe('FailingAddresses: the pacing of a company whose receiver fails', () => {
  const inFlight = held([['a', 1]]);

  it('takes every slot of a company within a poll of its failure, all but one after, none once it delivers', () => {
    const failing = new FailingAddresses(1_000);
    failing.record('b', false, 10_000);
    expect(failing.busy(inFlight, 4, 10_500)).to.deep.equal([
      ['a', 1],
      ['b', 4],
    ]);
    expect(failing.busy(inFlight, 4, 11_500)).to.deep.equal([
      ['a', 1],
      ['b', 3],
    ]);
    failing.record('b', true, 12_000);
    expect(failing.busy(inFlight, 4, 12_000)).to.deep.equal([['a', 1]]);
  });

  it("never counts fewer slots than the company's attempts in flight, and forgets a failure after a minute", () => {
    const failing = new FailingAddresses(1_000);
    failing.record('a', false, 0);
    expect(failing.busy(held([['a', 4]]), 4, 2_000)).to.deep.equal([['a', 4]]);
    expect(failing.busy(inFlight, 4, 61_000)).to.deep.equal([['a', 1]]);
  });

  it('lets the companies failing now take half of the slots together, less those they hold, and always one', () => {
    const failing = new FailingAddresses(1_000);
    failing.record('b', false, 0);
    failing.record('c', false, 0);
    const attempts = held([
      ['a', 4],
      ['b', 1],
      ['c', 2],
    ]);
    expect(failing.room(attempts, 32, 0)).to.deep.equal({ companies: ['b', 'c'], free: 13 });
    expect(failing.room(held([['b', 20]]), 32, 0)).to.deep.equal({ companies: ['b', 'c'], free: 0 });
    expect(failing.room(held([]), 1, 0)).to.deep.equal({ companies: ['b', 'c'], free: 1 });
    failing.record('b', true, 0);
    expect(failing.room(attempts, 32, 61_000)).to.deep.equal({ companies: [], free: 16 });
  });
});
