import { expect } from 'chai';
import { namedParameters } from '../../src/db/named-parameters.js';

describe('named statement parameters', () => {
  it('number each name once, in the order the text first refers to it', () => {
    const p = namedParameters();
    const text = `${p.ref('b', 'text')} ${p.ref('a', 'int')} ${p.ref('b', 'text')}`;
    expect(text).to.equal('$1::text $2::int $1::text');
    expect(p.values({ a: 7, b: 'x', unused: true })).to.deep.equal(['x', 7]);
  });

  it('refuse values without one of the parameters, instead of binding a gap', () => {
    const p = namedParameters();
    p.ref('a', 'int');
    p.ref('b', 'text');
    expect(() => p.values({ a: 1 })).to.throw('no value for the statement parameter b');
    expect(p.values({ a: 1, b: undefined })).to.deep.equal([1, undefined]);
  });
});
