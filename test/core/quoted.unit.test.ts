import { expect } from 'chai';
import { QUOTED_MAX_LENGTH, quoted } from '../../src/core/quoted.js';

describe('quoted (pure)', () => {
  it('keeps input up to the bound as it is', () => {
    expect(quoted('5b0c6e2e-8f9a-4d55-9d4e-0c1f8e6f2a10')).to.equal('5b0c6e2e-8f9a-4d55-9d4e-0c1f8e6f2a10');
    expect(quoted('a'.repeat(QUOTED_MAX_LENGTH))).to.equal('a'.repeat(QUOTED_MAX_LENGTH));
  });

  it('cuts longer input to the bound, marking the cut with …', () => {
    expect(quoted('a'.repeat(QUOTED_MAX_LENGTH + 1))).to.equal(`${'a'.repeat(QUOTED_MAX_LENGTH - 1)}…`);
    expect(quoted('abcdefgh', 5)).to.equal('abcd…');
  });

  it('never cuts between the halves of a surrogate pair', () => {
    const cut = quoted('abc😀defgh', 5);
    expect(cut).to.equal('abc…');
    expect(cut.isWellFormed()).to.equal(true);
    expect(quoted('ab😀defgh', 5)).to.equal('ab😀…');
  });
});
