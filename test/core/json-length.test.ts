import { expect } from 'chai';
import fc from 'fast-check';
import { jsonLength } from '../../src/core/json-length.js';

/** core/json-length.ts: the length of JSON.stringify(value), without building it. */
describe('jsonLength', () => {
  it('is the length of JSON.stringify for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(jsonLength(value)).to.equal(JSON.stringify(value).length);
      }),
      { numRuns: 500 },
    );
  });

  it('counts escapes, lone surrogates, pairs, undefined and empty containers as JSON.stringify writes them', () => {
    const values: unknown[] = [
      '',
      'a"b\\c\u0001\n\t',
      'lone \ud800 and \udfff',
      'del \u007f nel \u0085',
      '😀 € İ',
      [],
      {},
      [[], {}, [{}]],
      { skipped: undefined, kept: null },
      [undefined, 1],
      { nested: { list: ['x', 2, true, false, null] } },
      -0,
      1e21,
      0.1,
      { 'ke"y': 1 },
    ];
    for (const value of values) expect(jsonLength(value), JSON.stringify(value)).to.equal(JSON.stringify(value).length);
  });
});
